"""Python expressions of the NumPy frontend: the part of `translate.Translator`
that turns names, constants, operators, comparisons, `and`/`or`, conditional
expressions, attributes, subscripts and calls into lazy arrays (`arrays.py`),
integers (`Affine`), conditions (`Cond`) or Python objects. Operators on
complex values go to complex_values.py, on masked reads to masks.py; calls
dispatch to complex_calls.py or numpy_calls.py."""

from __future__ import annotations

import ast
import builtins
import warnings
from typing import Any

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import i1
from xdsl.ir import Block, Region
from xdsl.rewriter import InsertPoint

from dfc.dialects.df_builders import splat
from dfc.frontend import complex_calls, complex_values, dynamic_values, masks, weak_ints
from dfc.frontend.affine import Affine, opaque
from dfc.frontend.aliases import alias_cells, share
from dfc.frontend.arrays import (
    EXACT_FLOAT,
    UNSIGNED,
    Const,
    Expr,
    Index,
    ListValue,
    Op,
    View,
    is_float,
    result_dtype,
    tensor_type,
)
from dfc.frontend.complex_values import Complex
from dfc.frontend.emit import Emitter
from dfc.frontend.float_division import float_division
from dfc.frontend.indexing import broadcast
from dfc.frontend.numpy_calls import array_attribute, call
from dfc.frontend.numpy_linalg import matmul
from dfc.frontend.numpy_ufuncs import invert
from dfc.frontend.scopes import Cond, Undefined
from dfc.frontend.ufunc_out import call_with_out, has_out

BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow", ast.FloorDiv: "floordiv",
          ast.Mod: "mod", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor", ast.MatMult: "matmul",
          ast.LShift: "lshift", ast.RShift: "rshift"}
CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_PY_CMP = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
           "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}
_CMPI = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}


class Expressions:
    """Expression translation, mixed into `Translator`, whose builder (`b`), emitter (`em`),
    names (`env`), source (`src`) and `fail`/`loc` it uses."""

    def lookup(self, name: str, node: ast.AST) -> Any:
        if name == "$undefined":  # jumps.py: the results of a return in a loop, before it runs
            return Undefined()
        if name in self.env:
            v = self.env[name]
            if isinstance(v, View) and v.cell is not None:
                return View(v.cell.value, v.shape, v.offset, v.coef, v.dtype, v.cell)
            return v
        if name in self.src.scope:
            return self.src.scope[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise self.fail(f"name '{name}' is not defined here", node)

    def integer(self, value: Any, node: ast.AST) -> Affine:
        if isinstance(value, Affine):
            return value
        if isinstance(value, bool | np.bool_):
            return Affine(int(value))
        if isinstance(value, int | np.integer):
            return Affine(int(value))
        if isinstance(value, Const) and not value.shape and isinstance(value.value, int | np.integer):
            return Affine(int(value.value))
        if isinstance(value, Expr) and value.ndim == 0 and value.dtype[0] in "iu" and value.dtype != "i1":
            return self.runtime_integer(value)
        raise self.fail(f"expected an integer here, got {_kind(value)}", node)

    def as_expr(self, value: Any, node: ast.AST) -> Expr:
        """`value` as an array expression; a view of a named array reads the array
        as it is now (a call in the same expression may have updated it in place)."""
        if isinstance(value, View) and value.cell is not None and value.source is not value.cell.value and not value.gathers:
            return View(value.cell.value, value.shape, value.offset, value.coef, value.dtype, value.cell)
        if isinstance(value, Expr):
            return value
        if isinstance(value, Affine):
            return Const(value.static, "i64") if value.static is not None else Index(value)
        if isinstance(value, bool | np.bool_):
            return Const(bool(value), "i1")
        if isinstance(value, int | float):
            return Const(value, "f64" if isinstance(value, float) else "i64")
        if isinstance(value, np.integer | np.floating):  # strongly typed (NEP 50)
            dtype = _np_dtype(value)
            if dtype is None:
                raise self.fail(f"a NumPy number of dtype {value.dtype} used as an array value, not a supported dtype "
                                "(bool, int8-int64, uint8-uint64, float16-float64)", node)
            return Const(value.item(), dtype, False)
        if isinstance(value, Cond):
            t = splat(self.b, tensor_type("i1", []), 0)
            return View.whole(self.b.insert(tensor.InsertOp(value.value, t, [])).result)
        if isinstance(value, np.ndarray):
            raise self.fail("NumPy arrays from outside the function are not supported; pass them as arguments", node)
        if isinstance(value, masks.Masked):
            return dynamic_values.masked(self, value, node)
        if isinstance(value, Complex | complex | np.complexfloating):
            raise self.fail(complex_values.REAL_NEEDED, node)
        raise self.fail(f"expected an array or a number, got {_kind(value)}", node)

    def expr(self, node: ast.expr) -> Any:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise self.fail(f"unsupported expression: {describe(node)}", node)
        return method(node)

    def _Constant(self, node: ast.Constant) -> Any:
        v = node.value
        if isinstance(v, bool) or v is None or isinstance(v, str) or v is Ellipsis:
            return v
        if isinstance(v, int):
            return Affine(v)
        if isinstance(v, float):
            return Const(v, "f64")
        if isinstance(v, complex):
            return complex_values.constant(v)
        raise self.fail(f"unsupported constant {v!r}", node)

    def _Name(self, node: ast.Name) -> Any:
        return self.lookup(node.id, node)

    def _Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.expr(e) for e in node.elts)

    def _List(self, node: ast.List) -> ListValue:
        return ListValue(self.expr(e) for e in node.elts)

    def _Attribute(self, node: ast.Attribute) -> Any:
        base = self.expr(node.value)
        if isinstance(base, Complex):
            return complex_calls.attribute(self, base, node.attr, node)
        if isinstance(base, Expr | masks.Masked):
            return array_attribute(self, base, node.attr, node)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise self.fail(f"{_kind(base)} has no attribute '{node.attr}'", node) from None

    def _Subscript(self, node: ast.Subscript) -> Any:
        base = self.expr(node.value)
        if isinstance(base, tuple):
            k = self.integer(self.expr(node.slice), node.slice)
            if k.static is None:
                raise self.fail("a tuple index must be a constant", node)
            return base[k.static]
        if base is np.mgrid or base is np.ogrid:
            from dfc.frontend.numpy_creation import grid

            return grid(self, base is np.ogrid, node.slice, node)
        if isinstance(base, masks.Masked):
            base = dynamic_values.masked(self, base, node)
        if isinstance(base, Complex):
            return complex_calls.subscript(self, base, self.subscript(node.slice), node)
        if not isinstance(base, Expr):
            raise self.fail(f"cannot index {_kind(base)}", node)
        parts = tuple(dynamic_values.masked(self, p, node) if isinstance(p, masks.Masked) else p
                      for p in self.subscript(node.slice))
        if any(masks.is_mask(p) for p in parts):
            return masks.split(self, base, parts, node)
        return self.index(base, parts, node)

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.expr(node.operand)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.USub):
            if isinstance(v, Complex):
                return complex_values.negate(self, v, node)
            if isinstance(v, masks.Masked):
                return masks.binop(self, "mul", v, Const(-1, "i64"), node)
            if isinstance(v, Affine):
                return -v
            if isinstance(v, float | np.integer) or isinstance(v, int) and not isinstance(v, bool):
                with np.errstate(over="ignore"):
                    return -v  # a Python number (np.inf) or NumPy integer: still a compile-time constant
            if isinstance(v, Const) and not v.shape:
                return Const(-v.value, v.dtype, v.weak)
            e = self.as_expr(v, node)
            return Op("neg", [e], e.shape, e.dtype)
        if isinstance(node.op, ast.Not):
            c = self.condition(v, node)
            if isinstance(c, bool):
                return not c
            return Cond(self.b.insert(arith.XOrIOp(c, self.b.insert(arith.ConstantOp.from_int_and_width(1, 1)).result)).result)
        if isinstance(node.op, ast.Invert):
            return invert(self, v, node)
        raise self.fail(f"unsupported operator {type(node.op).__name__}", node)

    def _BinOp(self, node: ast.BinOp) -> Any:
        op = BINOPS.get(type(node.op))
        if op is None:
            raise self.fail(f"unsupported operator {type(node.op).__name__}", node)
        return self.binop(op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op: str, a: Any, b: Any, node: ast.AST) -> Any:
        if complex_values.is_complex(a) or complex_values.is_complex(b):
            if op == "matmul":
                return complex_calls.matmul(self, a, b, node)
            return complex_values.binop(self, op, a, b, node)
        if isinstance(a, masks.Masked) or isinstance(b, masks.Masked):
            if op != "matmul" and masks.combinable([a, b]):
                return masks.binop(self, op, a, b, node)
            a, b = (dynamic_values.masked(self, v, node) if isinstance(v, masks.Masked) else v for v in (a, b))
        if op == "matmul":
            return matmul(self, self.as_expr(a, node), self.as_expr(b, node), node)
        if isinstance(a, Affine) and isinstance(b, Affine) and op not in ("div", "pow"):
            return self.int_binop(op, a, b, node)
        if isinstance(a, Affine) and isinstance(b, Affine) and op == "pow" and (a.static is None or b.static is None):
            return self._int_power(a, b, node)
        try:
            folded = _numpy_integer_fold(op, a, b)
        except OverflowError as err:  # a Python int out of the NumPy integer's range (NEP 50)
            raise self.fail(str(err), node) from None
        if folded is not None:
            return folded
        if _number(a) is not None and _number(b) is not None:
            x, y = _number(a), _number(b)
            value = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "div": lambda: x / y,
                     "pow": lambda: x ** y, "floordiv": lambda: x // y, "mod": lambda: x % y}.get(op)
            if value is not None:
                r = value()
                return Affine(r) if isinstance(r, int) else Const(float(r), "f64")
        return self.elementwise(op, [self.as_expr(a, node), self.as_expr(b, node)], node)

    def _int_power(self, a: Affine, b: Affine, node: ast.AST) -> Affine:
        """`a ** b` of Python ints, one known only at run time: repeated products for a constant exponent."""
        if b.static is None:
            raise self.fail("a power of Python ints whose exponent is known only at run time (R ** i, i the "
                            "variable of a loop of more than 64 or a run-time number of iterations, which is not "
                            "unrolled) is not supported: Python's result is an int or a float by the exponent's "
                            "sign, and sizes computed from it would be run-time values; use a float base", node)
        if b.static < 0:
            raise self.fail("a negative power of a Python int known only at run time (a float in Python) is not "
                            "supported; use a float base", node)
        result = Affine(1)
        for _ in range(b.static):
            result = self.int_binop("mul", result, a, node)
        return result

    def int_binop(self, op: str, a: Affine, b: Affine, node: ast.AST) -> Affine:
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if a.static is not None and b.static is not None:
            x, y = a.static, b.static
            table = {"mul": x * y, "floordiv": x // y if y else None, "mod": x % y if y else None, "and": x & y,
                     "or": x | y, "xor": x ^ y, "lshift": x << y if y >= 0 else None, "rshift": x >> y if y >= 0 else None}
            if op in table and table[op] is not None:
                return Affine(table[op])
        if op == "mul":
            if a.static is not None:
                return b.scale(a.static)
            if b.static is not None:
                return a.scale(b.static)
            return opaque(self.b, arith.MuliOp, a, b)
        if op == "floordiv":
            return opaque(self.b, arith.FloorDivSIOp, a, b)
        if op == "mod":
            q = opaque(self.b, arith.FloorDivSIOp, a, b)
            return a - opaque(self.b, arith.MuliOp, q, b)
        if op in ("and", "or", "xor"):  # exact on 64-bit two's complement
            return opaque(self.b, {"and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp}[op], a, b)
        if op in ("lshift", "rshift") and b.static is not None and 0 <= b.static < 63:  # Python's shifts by constants
            return a.scale(1 << b.static) if op == "lshift" else opaque(self.b, arith.ShRSIOp, a, b)
        raise self.fail(f"unsupported integer operation '{op}'", node)

    def elementwise(self, op: str, args: list[Expr], node: ast.AST, dtype: str | None = None, attr: object = None) -> Op:
        shape = broadcast([a.shape for a in args], lambda m: self.fail(m, node))
        if dtype is None:
            floating = op in ("div", "exp", "log", "sqrt", "tanh", "sin", "cos", "log1p", "erf")
            dtype = result_dtype(args, floating)
            small = [a.dtype for a in args if not a.weak]
            if floating and op != "div" and small and all(d in ("i8", "i16", "u8", "u16") for d in small):
                dtype = EXACT_FLOAT[max(small, key=lambda d: int(d[1:]))]  # NumPy: np.sqrt of int8 is float16
            if op in BITWISE and any(is_float(a.dtype) for a in args):
                raise self.fail(f"{BITWISE[op]} needs integer or boolean operands (NumPy refuses floats)", node)
            if op in ("lshift", "rshift", "pow") and dtype == "i1":
                dtype = "i8"  # NumPy: bool << bool and bool ** bool are int8
            if all(a.weak for a in args) and is_float(dtype):
                dtype = self.default_float
        if op in ("mod", "floordiv") and is_float(dtype):
            return float_division(self, op, *args, node)
        if not is_float(dtype) and op == "pow" and not (_natural(args[1]) or args[1].dtype in ("i1", *UNSIGNED)):
            raise self.fail(_NEGATIVE_POWER if isinstance(args[1], Const) else _SIGNED_POWER, node)
        if not is_float(dtype) and op not in INTEGER_OPS and op != "pow":
            raise self.fail(f"'{op}' on integer arrays is not supported (convert with .astype(float))", node)
        weak_ints.check_arithmetic(self, op, args, dtype, node)
        r = Op(op, args, shape, dtype, attr)
        r.weak = False
        return r

    def _Compare(self, node: ast.Compare) -> Any:
        result: Any = None
        left = self.expr(node.left)
        for op, comp in zip(node.ops, node.comparators):
            name = CMPOPS.get(type(op))
            if name is None:
                raise self.fail(f"unsupported comparison {type(op).__name__}", node)
            right = self.expr(comp)
            value = self.compare(name, left, right, node)
            result = value if result is None else self.logical("and", result, value, node)
            left = right
        return result

    def compare(self, name: str, a: Any, b: Any, node: ast.AST) -> Any:
        if complex_values.is_complex(a) or complex_values.is_complex(b):
            return complex_values.compare(self, name, a, b, node)
        if (isinstance(a, masks.Masked) or isinstance(b, masks.Masked)) and masks.combinable([a, b]):
            return masks.elementwise(self, lambda tr, v, kw, n: self.compare(name, *v, n), [a, b], {}, node)
        a, b = (dynamic_values.masked(self, v, node) if isinstance(v, masks.Masked) else v for v in (a, b))
        if all(isinstance(v, Affine | int | np.integer) for v in (a, b)):
            a, b = (Affine.of(int(v) if isinstance(v, np.integer) else v) for v in (a, b))
            d = a - b
            if d.static is not None:
                return _PY_CMP[name](d.static, 0)
            return Cond(self.b.insert(arith.CmpiOp(a.emit(self.b), b.emit(self.b), _CMPI[name])).result)
        if _number(a) is not None and _number(b) is not None:
            return _PY_CMP[name](_number(a), _number(b))
        x, y = self.as_expr(a, node), self.as_expr(b, node)
        operand = result_dtype([x, y])
        if all(v.weak for v in (x, y)) and is_float(operand):
            operand = self.default_float
        decided = weak_ints.decided_compare(name, x, y, operand, x.shape if x.ndim >= y.ndim else y.shape)
        return decided or self.elementwise("compare", [x, y], node, "i1", (name, operand))

    def _BoolOp(self, node: ast.BoolOp) -> Any:
        """`a and b`, `a or b` as conditions; a run-time `a` evaluates `b` in an `scf.if`
        (Python's short circuit: `i < n and x[i] > 0` does not read `x[n]`)."""
        is_and = isinstance(node.op, ast.And)
        first = self.expr(node.values[0])
        if len(node.values) == 1:
            return first
        rest = node.values[1] if len(node.values) == 2 else ast.copy_location(
            ast.BoolOp(op=node.op, values=node.values[1:]), node.values[1])
        if isinstance(first, Expr) and first.ndim:
            raise self.fail("'and'/'or' on arrays is ambiguous; use & and |", node)
        c = self.condition(first, node)
        if isinstance(c, bool):
            if c != is_and:  # decided: False and ..., True or ...
                return c
            second = self.condition(self.expr(rest), rest)
            return second if isinstance(second, bool) else Cond(second)
        block = Block()
        outer_b, outer_em = self.b, self.em
        self.b = Builder(InsertPoint.at_end(block))
        self.em = Emitter(self.b, self.default_float, outer_em.fail)
        try:
            v = self.condition(self.expr(rest), rest)
            if isinstance(v, bool):
                v = self.b.insert(arith.ConstantOp.from_int_and_width(int(v), 1)).result
            self.b.insert(scf.YieldOp(v))
        finally:
            self.b, self.em = outer_b, outer_em
        decided = Block()
        Builder(InsertPoint.at_end(decided)).insert(scf.YieldOp(
            Builder(InsertPoint.at_end(decided)).insert(arith.ConstantOp.from_int_and_width(int(not is_and), 1)).result))
        regions = (Region(block), Region(decided)) if is_and else (Region(decided), Region(block))
        return Cond(self.b.insert(scf.IfOp(c, [i1], *regions)).results[0])

    def logical(self, op: str, a: Any, b: Any, node: ast.AST) -> Any:
        if isinstance(a, Expr) and a.ndim or isinstance(b, Expr) and b.ndim:
            raise self.fail("'and'/'or' on arrays is ambiguous; use & and |", node)
        x, y = self.condition(a, node), self.condition(b, node)
        if isinstance(x, bool) and isinstance(y, bool):
            return x and y if op == "and" else x or y
        if isinstance(x, bool):
            return (y if x else False) if op == "and" else (True if x else y)
        if isinstance(y, bool):
            return (x if y else False) if op == "and" else (True if y else x)
        return Cond(self.b.insert((arith.AndIOp if op == "and" else arith.OrIOp)(x, y)).result)

    def _IfExp(self, node: ast.IfExp) -> Any:
        c = self.condition(self.expr(node.test), node.test)
        if isinstance(c, bool):
            return self.expr(node.body if c else node.orelse)
        a, b = self.expr(node.body), self.expr(node.orelse)
        x, y = self.as_expr(a, node), self.as_expr(b, node)
        chosen = self.elementwise("where", [self.as_expr(Cond(c), node), x, y], node, result_dtype([x, y]))
        viewed = alias_cells(a) + alias_cells(b)
        if not viewed or not isinstance(chosen, Expr) or not chosen.ndim:
            return chosen
        value = self.em.materialize(chosen)  # NumPy's result is one of the arrays: a view of its memory
        return View.whole(value, share(self.new_cell(value), viewed))

    def _Call(self, node: ast.Call) -> Any:
        f = self.expr(node.func)
        if f is builtins.print:  # compiled code has no Python to print with: skipped, arguments unevaluated
            where = (self.src.filename, self.loc(node)[0])
            if where not in _WARNED:
                _WARNED.add(where)
                warnings.warn_explicit(f"print() in the compiled function {self.src.tree.name} is ignored",
                                       UserWarning, *where)
            return None
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise self.fail("*args and **kwargs in calls are not supported", node)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        if isinstance(f, np.ufunc) and has_out(f, args, kwargs):
            compute = complex_calls.call if complex_calls.takes_complex(f, args, kwargs) else call
            return call_with_out(self, f, args, kwargs, node, compute)
        if complex_calls.takes_complex(f, args, kwargs):
            return complex_calls.call(self, f, args, kwargs, node)
        return call(self, f, args, kwargs, node)



_WARNED: set[tuple[str, int]] = set()
"""The source lines whose `print` was warned about: each warns once per process."""


BITWISE = {"and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>"}
INTEGER_OPS = {"add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "and", "or", "xor", "lshift", "rshift",
               "neg", "not",
               "compare", "where", "convert", "abs"}


_NEGATIVE_POWER = "Integers to negative integer powers are not allowed (NumPy's ValueError); use a float base"
_SIGNED_POWER = ("an integer array to the power of a signed integer array: NumPy raises ValueError where an exponent "
                 "is negative, which compiled code does not check; use unsigned exponents (e.astype(np.uint64)) or a "
                 "float base")


def _natural(e: Expr) -> bool:
    """A constant non-negative integer exponent."""
    return isinstance(e, Const) and not e.shape and float(e.value).is_integer() and e.value >= 0


def _np_dtype(value: np.generic) -> str | None:
    """The frontend dtype of a NumPy number, None when it has none (longdouble)."""
    from dfc.frontend.dtypes import dtype_from_numpy

    return dtype_from_numpy(value.dtype)


_NUMPY_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
              "floordiv": np.floor_divide, "mod": np.remainder}


def _numpy_integer_fold(op: str, a: Any, b: Any) -> np.generic | None:
    """`a op b` for a NumPy integer and an integer constant, computed by NumPy (NEP 50's
    dtype, wraparound), so that it stays a compile-time integer; None otherwise."""
    if op not in _NUMPY_OPS or not (isinstance(a, np.integer) or isinstance(b, np.integer)):
        return None
    x, y = (v.static if isinstance(v, Affine) else v for v in (a, b))
    if not all(isinstance(v, np.integer) or type(v) is int for v in (x, y)) or (op != "div" and y == 0):
        return None
    with np.errstate(over="ignore", divide="ignore"):
        return _NUMPY_OPS[op](x, y)


def _number(v: Any) -> float | int | None:
    if isinstance(v, Affine):
        return v.static
    if isinstance(v, Const) and not v.shape and v.weak:
        return v.value  # type: ignore[return-value]
    if isinstance(v, int | float) and not isinstance(v, bool):
        return v
    return None


def _kind(value: Any) -> str:
    if isinstance(value, Expr):
        return f"an array of rank {value.ndim}"
    if isinstance(value, Affine):
        return "an integer"
    return f"a {type(value).__name__}"


def describe(node: ast.AST) -> str:
    names = {
        ast.While: "while loop", ast.Break: "break", ast.Continue: "continue", ast.With: "with statement",
        ast.Try: "try statement", ast.Raise: "raise", ast.FunctionDef: "nested function", ast.Lambda: "lambda",
        ast.ListComp: "list comprehension", ast.GeneratorExp: "generator expression", ast.DictComp: "dict comprehension",
        ast.Dict: "dict", ast.Set: "set", ast.Global: "global statement", ast.Nonlocal: "nonlocal statement",
        ast.Delete: "del statement", ast.Assert: "assert", ast.Import: "import", ast.ImportFrom: "import",
        ast.Starred: "starred expression", ast.JoinedStr: "f-string", ast.Await: "await", ast.Yield: "yield",
        ast.ClassDef: "class definition", ast.NamedExpr: "assignment expression (:=)", ast.Match: "match statement",
    }
    return names.get(type(node), type(node).__name__)