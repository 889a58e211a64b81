"""The ONNX importer's NonMaxSuppression: a static greedy selection, then `nn.nonzero` compaction.

Each (batch, class)'s boxes are ranked by descending score (a stable `nn.argsort`: among equal scores
the lower box index first, as ONNX's reference pops them), the pairwise "suppresses" relation of the
ranked boxes is computed at once ([B, C, N, N]: IoU above the threshold, with the reference's guards
against empty intersections and boxes), and one `scf.for` over the N ranks keeps a box when its score
is above `score_threshold` (when given), no box kept before it suppresses it, and fewer than
`max_output_boxes_per_class` are kept. `nn.nonzero` of the kept mask lists (batch, class, rank) in
ONNX's output order, and `nn.gather_points` maps each to its (batch, class, box index) row.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import AnyFloat, f32, i64
from xdsl.ir import Block, SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.dialects.nn_dynamic import GatherPointsOp, NonzeroOp
from dfc.dialects.nn_sort import ArgsortOp, take_along
from dfc.importers.onnx_common import NodeError, tensor_of


class NmsOps:
    """`op_NonMaxSuppression`, mixed into `OnnxImporter` (through `DynamicOps`; it uses `value`, `ins`,
    `constant`, `_reshape` and `_counted_for`)."""

    def op_NonMaxSuppression(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """[num_selected, 3] int64 rows (batch, class, box index): per batch, per class, the boxes greedy
        non-maximum suppression selects, by descending score (`center_point_box` 0: boxes are corners
        [y1, x1, y2, x2] in either order; 1: [x_center, y_center, width, height])."""
        boxes, scores = self.value(node.input[0]), self.value(node.input[1])
        bt, st = tensor_of(boxes), tensor_of(scores)
        bshape, sshape = list(bt.get_shape()), list(st.get_shape())
        if (len(bshape) != 3 or bshape[2] != 4 or len(sshape) != 3 or sshape[0] != bshape[0]
                or sshape[2] != bshape[1] or not isinstance(bt.element_type, AnyFloat)
                or st.element_type != bt.element_type):
            raise NodeError(f"NonMaxSuppression of boxes {bt} and scores {st} (needs float [B, N, 4] and [B, C, N])")
        (batches, count, _), classes = bshape, sshape[1]
        given = [k < len(node.input) and bool(node.input[k]) for k in range(5)]
        if not given[2] or batches * classes * count == 0:
            return [self.constant(np.zeros((0, 3), np.int64))]
        limit = self._nms_scalar(node.input[2], i64, "max_output_boxes_per_class")
        iou = (self._nms_scalar(node.input[3], bt.element_type, "iou_threshold") if given[3]
               else self.constant(np.zeros((), dtype_of(bt.element_type))))
        order = self.ins(ArgsortOp(scores, 2, descending=True))
        shape = [batches, classes, count]
        if given[4]:
            threshold = self._nms_scalar(node.input[4], bt.element_type, "score_threshold")
            valid = self.ins(nne.CompareOp(self.ins(take_along(scores, order, 2)), threshold, "GT"))
        else:
            valid = self.constant(np.ones(shape, np.bool_))
        ranked = self.ins(take_along(self.ins(nns.BroadcastInDimOp(boxes, [*shape, 4], [0, 2, 3])),
                                     self.ins(nns.BroadcastInDimOp(order, [*shape, 4], [0, 1, 2])), 2))
        suppresses = self._suppresses(ranked, shape, iou, bool(attrs.get("center_point_box", 0)))
        kept = self._greedy(suppresses, valid, limit, shape)
        rows = np.zeros([*shape, 2], np.int64)
        rows[..., 0], rows[..., 1] = np.arange(batches)[:, None, None], np.arange(classes)[None, :, None]
        table = self.ins(nns.ConcatenateOp([self.constant(rows),
                                            self._reshape(order, [*shape, 1])], 3))
        return [self.ins(GatherPointsOp(table, self.ins(NonzeroOp(kept)), 0))]

    def _nms_scalar(self, name: str, element: Any, what: str) -> SSAValue:
        """The one-element input `name` as a 0-d tensor of `element` type."""
        v = self.value(name)
        t = tensor_of(v)
        if t.element_count() != 1:
            raise NodeError(f"NonMaxSuppression's {what} is {t}; one element is needed")
        if t.element_type != element:
            v = self.ins(nne.ConvertOp(v, element))
        return self._reshape(v, [])

    def _suppresses(self, ranked: SSAValue, shape: list[int], iou: SSAValue, centered: bool) -> SSAValue:
        """[B, C, N, N] i1: whether ranked box p suppresses ranked box q (the reference's `suppress_by_iou`:
        a positive intersection, both areas and the union positive, and IoU above `iou`)."""
        b, c, n = shape
        coord = [self._reshape(self.ins(nns.SliceOp(ranked, [0, 0, 0, k], [b, c, n, k + 1], [1] * 4)), shape)
                 for k in range(4)]
        if centered:
            half = self.constant(np.array(0.5, dtype_of(tensor_of(ranked).element_type)))
            w, h = (self.ins(nn.MulOp(coord[k], half)) for k in (2, 3))
            lo = [self.ins(nn.SubOp(coord[k], d)) for k, d in ((0, w), (1, h))]
            hi = [self.ins(nn.AddOp(coord[k], d)) for k, d in ((0, w), (1, h))]
        else:
            lo = [self.ins(nne.MinimumOp(coord[k], coord[k + 2])) for k in (1, 0)]
            hi = [self.ins(nne.MaximumOp(coord[k], coord[k + 2])) for k in (1, 0)]

        def pair(v: SSAValue) -> tuple[SSAValue, SSAValue]:
            return self._reshape(v, [b, c, n, 1]), self._reshape(v, [b, c, 1, n])

        zero = self.constant(np.zeros((), dtype_of(tensor_of(ranked).element_type)))
        conditions, sides = [], []
        for low, high in zip(lo, hi):
            start = self.ins(nne.MaximumOp(*pair(low)))
            stop = self.ins(nne.MinimumOp(*pair(high)))
            conditions.append(self.ins(nne.CompareOp(stop, start, "GT")))
            sides.append(self.ins(nn.SubOp(stop, start)))
        inter = self.ins(nn.MulOp(*sides))
        area = self.ins(nn.MulOp(*(self.ins(nn.SubOp(h, lo_)) for lo_, h in zip(lo, hi))))
        area_p, area_q = pair(area)
        union = self.ins(nn.SubOp(self.ins(nn.AddOp(area_p, area_q)), inter))
        for v in (inter, area_p, area_q, union):
            conditions.append(self.ins(nne.CompareOp(v, zero, "GT")))
        conditions.append(self.ins(nne.CompareOp(self.ins(nn.DivOp(inter, union)), iou, "GT")))
        result = conditions[0]
        for cond in conditions[1:]:
            result = self.ins(nne.AndOp(result, cond))
        return result

    def _greedy(self, suppresses: SSAValue, valid: SSAValue, limit: SSAValue, shape: list[int]) -> SSAValue:
        """[B, C, N] i1: the ranked boxes the greedy selection keeps, one `scf.for` step per rank."""
        b, c, n = shape

        def fill(block: Block) -> tuple[list[SSAValue], list[bool]]:
            rank, kept, counts = block.args[1:4]
            zero = self.constant(np.zeros((), np.int64))
            row = self._reshape(self.ins(nns.DynamicSliceOp(suppresses, [zero, zero, rank, zero], [b, c, 1, n])),
                                shape)
            hits = self.ins(nne.ConvertOp(self.ins(nne.AndOp(row, kept)), f32))
            hit = self.ins(nne.CompareOp(self.ins(nn.ReduceOp(hits, "max", [2])),
                                         self.constant(np.zeros((), np.float32)), "GT"))
            candidate = self._reshape(self.ins(nns.DynamicSliceOp(valid, [zero, zero, rank], [b, c, 1])), [b, c])
            keep = self.ins(nne.AndOp(self.ins(nne.AndOp(candidate, self.ins(nne.NotOp(hit)))),
                                      self.ins(nne.CompareOp(counts, limit, "LT"))))
            kept = self.ins(nns.DynamicUpdateSliceOp(kept, self._reshape(keep, [b, c, 1]), [zero, zero, rank]))
            counts = self.ins(nn.AddOp(counts, self.ins(nne.ConvertOp(keep, i64))))
            return [kept, counts], [False, False]

        inits = [self.constant(np.zeros(shape, np.bool_)), self.constant(np.zeros([b, c], np.int64))]
        results, _ = self._counted_for(n, inits, fill)
        return results[0]

