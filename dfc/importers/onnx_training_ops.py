"""The ONNX importer's optimizer steps of the `ai.onnx.preview.training` domain:
`Adagrad`, `Adam` and `Momentum`, elementwise nn arithmetic on each optimized
tensor as the operators' pseudo code writes it (the scalar learning rate `R`
and update count `T` known only at run time)."""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import AnyFloat, f64
from xdsl.ir import SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.importers.onnx_common import NodeError, tensor_of

TRAINING_OPS = frozenset({"Adagrad", "Adam", "Momentum", "Gradient"})
"""Operators of the `ai.onnx.preview.training` domain the importer builds (Gradient: `onnx_gradient`)."""


class TrainingOps:
    """`op_Adagrad`, `op_Adam` and `op_Momentum`, mixed into `OnnxImporter` (whose `value`, `ins` and
    `scalar` they use)."""

    def _optimized(self, node: Any, groups: int) -> tuple[SSAValue, SSAValue, list[list[SSAValue]]]:
        """(R, T, [the n tensors of each group]) of an optimizer node: inputs R, T, then `groups` groups
        of n tensors (X_1..X_n, G_1..G_n, ...), every tensor float."""
        inputs = list(node.input)
        if (len(inputs) - 2) % groups or len(inputs) == 2:
            raise NodeError(f"{node.op_type} of {len(inputs)} inputs: R, T and {groups} groups of equal size")
        n = (len(inputs) - 2) // groups
        tensors = [[self.value(name) for name in inputs[2 + g * n:2 + (g + 1) * n]] for g in range(groups)]
        for t in (x for group in tensors for x in group):
            if not isinstance(tensor_of(t).element_type, AnyFloat):
                raise NodeError(f"{node.op_type} of {tensor_of(t)} (not float)")
        return self.value(inputs[0]), self.value(inputs[1]), tensors

    def _like(self, v: SSAValue, x: SSAValue) -> SSAValue:
        """The 0-d `v` converted to x's element type."""
        e = tensor_of(x).element_type
        return v if tensor_of(v).element_type == e else self.ins(nne.ConvertOp(v, e))

    def _regularized(self, x: SSAValue, g: SSAValue, coefficient: float) -> SSAValue:
        """norm_coefficient X + G."""
        return self.ins(nn.AddOp(self.ins(nn.MulOp(self.scalar(coefficient, x), x)), g))

    def _positive(self, t: SSAValue) -> SSAValue:
        """T > 0 (0-d i1)."""
        steps = self._float_t(t)
        return self.ins(nne.CompareOp(steps, self.scalar(0.0, steps), "GT"))

    def _float_t(self, t: SSAValue) -> SSAValue:
        """The update count T as f64."""
        return self.ins(nne.ConvertOp(t, f64))

    def op_Adagrad(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """r = R / (1 + T decay_factor); H_new = H + G_r^2; X_new = X - r G_r / (sqrt(H_new) + epsilon),
        with G_r = norm_coefficient X + G. Outputs X_new..., H_new..."""
        r, t, (xs, gs, hs) = self._optimized(node, 3)
        news, accumulated = [], []
        for x, g, h in zip(xs, gs, hs):
            decayed = self.ins(nn.AddOp(self.scalar(1.0, x), self.ins(nn.MulOp(
                self._like(self._float_t(t), x), self.scalar(attrs["decay_factor"], x)))))
            rate = self.ins(nn.DivOp(self._like(r, x), decayed))
            reg = self._regularized(x, g, attrs["norm_coefficient"])
            h_new = self.ins(nn.AddOp(h, self.ins(nn.MulOp(reg, reg))))
            adaptive = self.ins(nn.AddOp(self.ins(nn.SqrtOp(h_new)), self.scalar(attrs["epsilon"], x)))
            news.append(self.ins(nn.SubOp(x, self.ins(nn.DivOp(self.ins(nn.MulOp(rate, reg)), adaptive)))))
            accumulated.append(h_new)
        return news + accumulated

    def op_Adam(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """V_new = alpha V + (1 - alpha) G_r; H_new = beta H + (1 - beta) G_r^2; X_new = X - R_a V_new /
        (sqrt(H_new) + epsilon), R_a = R sqrt(1 - beta^T) / (1 - alpha^T) for T > 0, else R; then
        X_final = (1 - norm_coefficient_post) X_new. Outputs X_final..., V_new..., H_new..."""
        r, t, (xs, gs, vs, hs) = self._optimized(node, 4)
        alpha, beta = attrs["alpha"], attrs["beta"]
        outputs: list[list[SSAValue]] = [[], [], []]
        for x, g, v, h in zip(xs, gs, vs, hs):
            reg = self._regularized(x, g, attrs["norm_coefficient"])
            v_new = self.ins(nn.AddOp(self.ins(nn.MulOp(self.scalar(alpha, x), v)),
                                      self.ins(nn.MulOp(self.scalar(1 - alpha, x), reg))))
            h_new = self.ins(nn.AddOp(self.ins(nn.MulOp(self.scalar(beta, x), h)),
                                      self.ins(nn.MulOp(self.scalar(1 - beta, x), self.ins(nn.MulOp(reg, reg))))))
            steps = self._like(self._float_t(t), x)
            rate = self._like(r, x)

            def power(base: float, like: SSAValue = x, steps: SSAValue = steps) -> SSAValue:
                return self.ins(nne.PowerOp(self.scalar(base, like), steps))

            one = self.scalar(1.0, x)
            adjusted = self.ins(nn.DivOp(self.ins(nn.MulOp(rate, self.ins(nn.SqrtOp(self.ins(nn.SubOp(
                one, power(beta))))))), self.ins(nn.SubOp(one, power(alpha)))))
            rate = self.ins(nne.SelectOp(self._positive(t), adjusted, rate))
            root = self.ins(nn.AddOp(self.ins(nn.SqrtOp(h_new)), self.scalar(attrs["epsilon"], x)))
            x_new = self.ins(nn.SubOp(x, self.ins(nn.DivOp(self.ins(nn.MulOp(rate, v_new)), root))))
            x_new = self.ins(nn.MulOp(self.scalar(1 - attrs["norm_coefficient_post"], x), x_new))
            for out, value in zip(outputs, (x_new, v_new, h_new)):
                out.append(value)
        return [v for out in outputs for v in out]

    def op_Momentum(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """V_new = alpha V + beta_a G_r (beta_a = beta for T > 0, else 1); X_new = X - R V_new
        ('standard') or X - R (G_r + alpha V_new) ('nesterov'). Outputs X_new..., V_new..."""
        r, t, (xs, gs, vs) = self._optimized(node, 3)
        mode = attrs.get("mode")
        if mode not in ("standard", "nesterov"):
            raise NodeError(f"Momentum mode '{mode}' (standard or nesterov)")
        news, momenta = [], []
        for x, g, v in zip(xs, gs, vs):
            reg = self._regularized(x, g, attrs["norm_coefficient"])
            scale = self.ins(nne.SelectOp(self._positive(t), self.scalar(attrs["beta"], x), self.scalar(1.0, x)))
            v_new = self.ins(nn.AddOp(self.ins(nn.MulOp(self.scalar(attrs["alpha"], x), v)),
                                      self.ins(nn.MulOp(scale, reg))))
            step = v_new if mode == "standard" else self.ins(nn.AddOp(reg, self.ins(nn.MulOp(
                self.scalar(attrs["alpha"], x), v_new))))
            news.append(self.ins(nn.SubOp(x, self.ins(nn.MulOp(self._like(r, x), step)))))
            momenta.append(v_new)
        return news + momenta
