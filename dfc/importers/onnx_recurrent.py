"""The ONNX importer's recurrent layers: RNN, GRU and LSTM, unrolled over the
(static) sequence into nn ops, as ONNX's operator specification defines them.

Per direction, the input projection of every time step is one `nn.linear` of
the whole sequence (`[T * B, I]` by `W^T`, with both biases); each step adds
the recurrent `nn.linear` of the previous hidden state, slices the gates
(ONNX's order: LSTM i, o, f, c; GRU z, r, h) and applies the activations
(`activations`, `activation_alpha`/`activation_beta` consumed in order by the
activations that take them; `clip` bounds each gate's pre-activation). LSTM
takes peepholes `P` and `input_forget`; GRU `linear_before_reset`. A reverse
direction runs the steps from the last one. `sequence_lens` (at import or run
time) masks the steps at or past each batch element's length: the state is
kept (`nn.select`), `Y` is 0 there, so `Y_h`/`Y_c` are the states at the last
valid step (of the first step, reverse). `layout = 1` reads and writes batch
first. Unrolling keeps the layer ordinary nn ops, which `autodiff` and both
backends handle; the IR grows with the sequence length."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import AnyFloat, FloatAttr
from xdsl.ir import Block, SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.importers.onnx_common import NodeError, tensor_of

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_DEFAULT_ACTIVATIONS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
_PARAMETERS = {"LeakyRelu": "a", "ThresholdedRelu": "a", "Elu": "a", "HardSigmoid": "ab", "ScaledTanh": "ab",
               "Affine": "ab"}
"""The activations that take `activation_alpha` (a) and `activation_beta` (b) values."""
_NAMES = {n.lower(): n for n in ("Sigmoid", "Tanh", "Relu", "Softsign", "Softplus", *_PARAMETERS)}


class RecurrentOps:
    """`op_RNN`, `op_GRU` and `op_LSTM`, mixed into `OnnxImporter` (whose `value`, `ins`, `scalar`,
    `_reshape`, `_cut`, activation helpers and `ControlFlowOps._counted_for` they use)."""

    def op_RNN(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """H = f(X W^T + H R^T + Wb + Rb)."""
        return self._recurrent(node, attrs)

    def op_GRU(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """z = f(.), r = f(.), h = g(X Wh^T + (r H) Rh^T + Rbh + Wbh) (linear_before_reset: r (H Rh^T + Rbh)),
        H = (1 - z) h + z H."""
        return self._recurrent(node, attrs)

    def op_LSTM(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """i = f(. + Pi C), f = f(. + Pf C) (input_forget: 1 - i), c = g(.), C = f C + i c,
        o = f(. + Po C_new), H = o h(C)."""
        return self._recurrent(node, attrs)

    # ------------------------------------------------------------ the layer

    def _optional(self, node: Any, k: int) -> SSAValue | None:
        return self.value(node.input[k]) if len(node.input) > k and node.input[k] else None

    def _recurrent(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        op = node.op_type
        x, w, r = (self.value(n) for n in node.input[:3])
        b, lengths, h0 = (self._optional(node, k) for k in (3, 4, 5))
        c0, p = (self._optional(node, k) for k in (6, 7)) if op == "LSTM" else (None, None)
        e = tensor_of(x).element_type
        if not isinstance(e, AnyFloat):
            raise NodeError(f"{op} of {tensor_of(x)} (not float) is not supported")
        direction = {"foward": "forward"}.get(attrs["direction"], attrs["direction"])  # GRU-1's schema default
        if direction not in ("forward", "reverse", "bidirectional"):
            raise NodeError(f"{op} direction '{direction}' is not supported")
        dirs = 2 if direction == "bidirectional" else 1
        batch_first = attrs.get("layout", 0) == 1
        if batch_first:
            x = self.ins(nn.TransposeOp(x, [1, 0, 2]))
        steps, batch, _ = tensor_of(x).get_shape()
        gates = _GATES[op]
        hidden = attrs.get("hidden_size") or tensor_of(r).get_shape()[-1]
        if list(tensor_of(w).get_shape())[:2] != [dirs, gates * hidden] or tensor_of(r).get_shape() != (
                dirs, gates * hidden, hidden):
            raise NodeError(f"{op} weights {tensor_of(w)}, {tensor_of(r)} for {dirs} direction(s) and "
                            f"hidden_size {hidden}")
        given = {a.name for a in node.attribute}
        activations = self._activations(op, attrs if "activations" in given else {**attrs, "activations": None}, dirs)
        mask = self._step_mask(node, lengths, steps, batch)
        outputs = []
        for d in range(dirs):
            state = [self._initial(s, d, dirs, batch, hidden, batch_first, x) for s in (h0, c0)[:2 if op == "LSTM" else 1]]
            cell = _Cell(self, op, attrs, self._direction(w, d), self._direction(r, d),
                         None if b is None else self._direction(b, d), None if p is None else self._direction(p, d),
                         hidden, activations[d])
            projected = cell.project(self._reshape(x, [steps * batch, tensor_of(x).get_shape()[2]]))
            projected = self._reshape(projected, [steps, batch, gates * hidden])
            outputs.append(self._time_loop(cell, projected, state, mask, direction == "reverse" or d == 1))
        return self._layer_outputs(outputs, steps, batch, hidden, batch_first, op == "LSTM")

    def _time_loop(self, cell: _Cell, projected: SSAValue, state: list[SSAValue],
                   mask: Callable[[SSAValue], SSAValue] | None, reverse: bool) -> tuple[SSAValue, list[SSAValue]]:
        """(Y [T, B, H], the final states) of one direction: an `scf.for` over the steps (`_counted_for`,
        whose step counter indexes the dynamic slices) carrying the states and Y, which each step writes;
        `projected` [T, B, G * H] is read a step at a time."""
        steps, batch, width = tensor_of(projected).get_shape()

        def fill(block: Block) -> tuple[list[SSAValue], list[bool]]:
            counter, states = block.args[1], list(block.args[2:])
            t = self.sub(self.constant(np.array(steps - 1, np.int64)), counter) if reverse else counter
            zero = self.constant(np.zeros((), np.int64))
            xw = self._reshape(self.ins(nns.DynamicSliceOp(projected, [t, zero, zero], [1, batch, width])),
                               [batch, width])
            new = [n for n in cell.step(xw, states[0], states[1] if len(states) > 1 else None) if n is not None]
            y = new[0]
            if mask is not None:
                keep = mask(t)
                new = [self.ins(nne.SelectOp(keep, n, s)) for n, s in zip(new, states)]
                y = self.ins(nne.SelectOp(keep, y, self.scalar(0.0, y)))
            return [*new, self._accumulate(block, y, 0, t, steps)], []

        built = self._counted_for(steps, state, fill)
        assert built is not None
        *finals, ys = built[0]
        return ys, finals

    def _direction(self, t: SSAValue, d: int) -> SSAValue:
        """`t[d]` (the first dimension dropped)."""
        shape = list(tensor_of(t).get_shape())
        return self._reshape(self._cut(t, 0, d, d + 1), shape[1:])

    def _initial(self, given: SSAValue | None, d: int, dirs: int, batch: int, hidden: int, batch_first: bool,
                 like: SSAValue) -> SSAValue:
        """Direction d's initial state [B, H]: of `given` ([D, B, H]; batch first [B, D, H]), or zeros."""
        if given is None:
            return self.ins(nn.FullOp(FloatAttr(0.0, tensor_of(like).element_type), [batch, hidden]))  # type: ignore[arg-type]
        expected = (batch, dirs, hidden) if batch_first else (dirs, batch, hidden)
        if tensor_of(given).get_shape() != expected:
            raise NodeError(f"initial state {tensor_of(given)}: expected the shape {list(expected)}")
        return self._reshape(self._cut(given, 1 if batch_first else 0, d, d + 1), [batch, hidden])

    def _step_mask(self, node: Any, lengths: SSAValue | None, steps: int,
                   batch: int) -> Callable[[SSAValue], SSAValue] | None:
        """For `sequence_lens`: the step (a 0-d i64 tensor) -> the [B, 1] i1 tensor `step < length`; None
        without lengths, or lengths known at import time to be the full sequence."""
        if lengths is None:
            return None
        name = node.input[4]
        if name in self.consts and (self.consts[name] == steps).all():
            return None
        if tensor_of(lengths).get_shape() != (batch,):
            raise NodeError(f"sequence_lens {tensor_of(lengths)} for a batch of {batch}")
        column = self._reshape(lengths, [batch, 1])
        integer = tensor_of(column).element_type
        return lambda t: self.ins(nne.CompareOp(self.ins(nne.ConvertOp(t, integer)), column, "LT"))

    def _activations(self, op: str, attrs: dict[str, Any], dirs: int) -> list[list[Callable[[SSAValue], SSAValue]]]:
        """Per direction, the activations (f, g, h) as functions of nn ops (`activations` None: the defaults;
        RNN's schema gives two whatever the directions)."""
        count = len(_DEFAULT_ACTIVATIONS[op])
        names = [n.decode() if isinstance(n, bytes) else n
                 for n in attrs.get("activations") or _DEFAULT_ACTIVATIONS[op] * dirs]
        if len(names) != count * dirs:
            raise NodeError(f"{op} activations {names}: {count} per direction are needed")
        alphas, betas = list(attrs.get("activation_alpha") or []), list(attrs.get("activation_beta") or [])
        functions = []
        for name in names:
            canonical = _NAMES.get(name.lower())
            if canonical is None:
                raise NodeError(f"{op} activation '{name}' is not supported")
            wanted = _PARAMETERS.get(canonical, "")
            alpha = alphas.pop(0) if "a" in wanted and alphas else None
            beta = betas.pop(0) if "b" in wanted and betas else None
            functions.append(self._activation(op, canonical, alpha, beta))
        return [functions[d * count:(d + 1) * count] for d in range(dirs)]

    def _activation(self, op: str, name: str, alpha: float | None, beta: float | None) -> Callable[[SSAValue], SSAValue]:
        defaults = _defaults(name, self.opset)
        alpha = defaults.get("alpha") if alpha is None else alpha
        beta = defaults.get("beta") if beta is None else beta
        if (alpha is None and "a" in _PARAMETERS.get(name, "")) or (beta is None and "b" in _PARAMETERS.get(name, "")):
            raise NodeError(f"{op} activation {name} needs activation_alpha and activation_beta values")
        simple = {"Sigmoid": nn.SigmoidOp, "Tanh": nn.TanhOp, "Relu": nn.ReluOp}
        if name in simple:
            return lambda v: self.ins(simple[name](v))
        forms: dict[str, Callable[[SSAValue], SSAValue]] = {
            "Softsign": lambda v: self.ins(nn.DivOp(v, self.add(self.scalar(1.0, v), self.ins(nne.AbsOp(v))))),
            "Softplus": self._softplus,
            "LeakyRelu": lambda v: self.where(self.cmp(v, self.scalar(0.0, v), "LT"),
                                               self.mul(v, self.scalar(alpha, v)), v),
            "ThresholdedRelu": lambda v: self.where(self.cmp(v, self.scalar(alpha, v), "GT"), v,
                                                     self.scalar(0.0, v)),
            "Elu": lambda v: self._elu(v, alpha),
            "HardSigmoid": lambda v: self._hard_sigmoid(v, alpha, beta),
            "ScaledTanh": lambda v: self.mul(self.scalar(alpha, v),
                                              self.ins(nn.TanhOp(self.mul(v, self.scalar(beta, v))))),
            "Affine": lambda v: self.add(self.mul(v, self.scalar(alpha, v)), self.scalar(beta, v)),
        }
        return forms[name]

    def _layer_outputs(self, outputs: Sequence[tuple[SSAValue, list[SSAValue]]], steps: int, batch: int,
                       hidden: int, batch_first: bool, lstm: bool) -> list[SSAValue]:
        """Y [T, D, B, H] (batch first: [B, T, D, H]), Y_h and, LSTM, Y_c [D, B, H] ([B, D, H])."""
        per_direction = [self._reshape(ys, [steps, 1, batch, hidden]) for ys, _ in outputs]
        y = per_direction[0] if len(per_direction) == 1 else self.ins(nns.ConcatenateOp(per_direction, 1))
        if batch_first:
            y = self.ins(nn.TransposeOp(y, [2, 0, 1, 3]))
        results = [y]
        for k in range(2 if lstm else 1):
            parts = [self._reshape(state[k], [1, batch, hidden]) for _, state in outputs]
            final = parts[0] if len(parts) == 1 else self.ins(nns.ConcatenateOp(parts, 0))
            results.append(self.ins(nn.TransposeOp(final, [1, 0, 2])) if batch_first else final)
        return results


class _Cell:
    """One direction's weights and the step function of its layer kind."""

    def __init__(self, importer: Any, op: str, attrs: dict[str, Any], w: SSAValue, r: SSAValue,
                 b: SSAValue | None, p: SSAValue | None, hidden: int, activations: list[Callable]):
        self.im, self.op, self.hidden, self.act = importer, op, hidden, activations
        self.w, self.r, self.p = w, r, p
        self.clip = attrs.get("clip")
        self.linear_before_reset = op == "GRU" and attrs.get("linear_before_reset", 0) != 0
        self.input_forget = op == "LSTM" and attrs.get("input_forget", 0) != 0
        size = tensor_of(w).get_shape()[0]
        e = tensor_of(w).element_type
        zeros = importer.ins(nn.FullOp(FloatAttr(0.0, e), [size]))  # type: ignore[arg-type]
        if b is None:
            self.input_bias, self.recurrent_bias = zeros, zeros
        else:
            wb, rb = importer._cut(b, 0, 0, size), importer._cut(b, 0, size, 2 * size)
            if self.linear_before_reset:  # Rbh stays with the recurrent term, inside r * (.)
                keep = np.arange(size) < 2 * hidden
                self.input_bias = importer.add(wb, importer.mul(rb, importer.constant(keep.astype(dtype_of(e)))))
                self.recurrent_bias = importer.mul(rb, importer.constant((~keep).astype(dtype_of(e))))
            else:
                self.input_bias, self.recurrent_bias = importer.add(wb, rb), zeros

    def project(self, x: SSAValue) -> SSAValue:
        """X W^T + the input bias, every step at once ([T * B, G * H])."""
        return self.im.ins(nn.LinearOp(x, self.w, self.input_bias))

    def _gate(self, all_gates: SSAValue, k: int) -> SSAValue:
        return self.im._cut(all_gates, 1, k * self.hidden, (k + 1) * self.hidden)

    def _activate(self, k: int, v: SSAValue) -> SSAValue:
        if self.clip is not None:
            im = self.im
            v = im.ins(nne.MinimumOp(im.ins(nne.MaximumOp(v, im.scalar(-self.clip, v))), im.scalar(self.clip, v)))
        return self.act[k](v)

    def _peephole(self, k: int, v: SSAValue, c: SSAValue) -> SSAValue:
        if self.p is None:
            return v
        return self.im.add(v, self.im.mul(self.im._cut(self.p, 0, k * self.hidden, (k + 1) * self.hidden), c))

    def step(self, xw: SSAValue, h: SSAValue, c: SSAValue | None) -> list[SSAValue]:
        """The new [H, C] (C None but for LSTM) from the projected input `xw` [B, G * H]."""
        im, size = self.im, self.hidden
        if self.op == "GRU" and not self.linear_before_reset:  # h's recurrent term takes r * H
            zr = im.add(im._cut(xw, 1, 0, 2 * size), self._recurrent(h, 0, 2))
            z, reset = self._activate(0, self._gate(zr, 0)), self._activate(0, self._gate(zr, 1))
            candidate = self._activate(1, im.add(self._gate(xw, 2), self._recurrent(im.mul(reset, h), 2, 3)))
            return [self._blend(z, candidate, h), None]
        recurrent = self._recurrent(h, 0, _GATES[self.op])
        if self.op == "RNN":
            return [self._activate(0, im.add(xw, recurrent)), None]
        if self.op == "GRU":  # linear_before_reset: r * (H Rh^T + Rbh)
            z = self._activate(0, im.add(self._gate(xw, 0), self._gate(recurrent, 0)))
            reset = self._activate(0, im.add(self._gate(xw, 1), self._gate(recurrent, 1)))
            candidate = self._activate(1, im.add(self._gate(xw, 2), im.mul(reset, self._gate(recurrent, 2))))
            return [self._blend(z, candidate, h), None]
        assert c is not None
        gates = im.add(xw, recurrent)
        i = self._activate(0, self._peephole(0, self._gate(gates, 0), c))
        if self.input_forget:
            f = im.sub(im.scalar(1.0, i), i)
        else:
            f = self._activate(0, self._peephole(2, self._gate(gates, 2), c))
        c_new = im.add(im.mul(f, c), im.mul(i, self._activate(1, self._gate(gates, 3))))
        o = self._activate(0, self._peephole(1, self._gate(gates, 1), c_new))
        return [im.mul(o, self.act[2](c_new)), c_new]

    def _recurrent(self, h: SSAValue, first: int, last: int) -> SSAValue:
        """h R^T + Rb for the gates [first, last)."""
        im, size = self.im, self.hidden
        weights = im._cut(self.r, 0, first * size, last * size)
        return im.ins(nn.LinearOp(h, weights, im._cut(self.recurrent_bias, 0, first * size, last * size)))

    def _blend(self, z: SSAValue, candidate: SSAValue, h: SSAValue) -> SSAValue:
        """(1 - z) candidate + z h."""
        im = self.im
        return im.add(im.mul(im.sub(im.scalar(1.0, z), z), candidate), im.mul(z, h))


def _defaults(name: str, opset: int) -> dict[str, Any]:
    """The alpha and beta defaults of the ONNX operator `name` (none for ScaledTanh and Affine, which
    ONNX no longer defines)."""
    from onnx import defs, helper

    try:
        schema = defs.get_schema(name, opset, "")
    except defs.SchemaError:
        return {}
    return {k: helper.get_attribute_value(a.default_value) for k, a in schema.attributes.items()
            if k in ("alpha", "beta") and a.default_value.type}
