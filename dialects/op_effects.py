"""What dfc's dead-code elimination, `canonicalize` and `cse` ask of an op:
its class's traits, looked up once per class (`op_class`), whether it would
be dead without uses (`would_be_trivially_dead`, `is_trivially_dead`) and
whether it only reads (`effects_kind`). Each answers as xDSL's function of
the same name (`xdsl.traits`, `xdsl.transforms.dead_code_elimination`) does,
stopping at the first effect that decides, where xDSL collects every effect
of every op nested in the op first: a loop nest was walked whole once per op
above it (quadratic in the nesting depth). A block's ops are asked last
first: a loop body's or a map's writes come last (the answers are
conjunctions of pure tests, so their order changes only the time)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import (
    ConstantLike,
    HasCanonicalizationPatternsTrait,
    HasFolder,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    NoMemoryEffect,
    RecursiveMemoryEffect,
    SymbolOpInterface,
)


@dataclass(frozen=True)
class OpClass:
    """What dead-code elimination and `canonicalize` ask of an op's class,
    looked up once per class: an op's traits are its class's (`has_trait` and
    `get_traits_of_type` are class methods scanning the class's trait set;
    they were a third of `canonicalize`'s time, asked again for every op on
    every round)."""

    terminator: bool
    """It is a terminator (`IsTerminator`; an unregistered op may be one)."""
    kept: bool
    """A terminator or a symbol: never trivially dead."""
    effects: tuple[MemoryEffect, ...]
    """Its `MemoryEffect` traits."""
    no_effects: bool
    """It has effect traits and every one is `NoMemoryEffect` (`Pure`): it
    affects nothing, whatever the op holds."""
    foldable: bool
    """It has a folder and is not a constant (xDSL's folding rule)."""
    patterns: tuple[RewritePattern, ...]
    """Its canonicalization patterns, in its traits' order."""


_CLASSES: dict[type[Operation], OpClass] = {}


def op_class(op: Operation) -> OpClass:
    """What `op`'s class answers (looked up on its first op)."""
    cls = type(op)
    info = _CLASSES.get(cls)
    if info is None:
        effects = tuple(op.get_traits_of_type(MemoryEffect))
        info = _CLASSES[cls] = OpClass(
            terminator=op.has_trait(IsTerminator),
            kept=op.has_trait(IsTerminator, value_if_unregistered=False)
            or op.has_trait(SymbolOpInterface, value_if_unregistered=False),
            effects=effects,
            no_effects=bool(effects) and all(isinstance(t, NoMemoryEffect) for t in effects),
            foldable=op.has_trait(HasFolder, value_if_unregistered=False)
            and not op.has_trait(ConstantLike, value_if_unregistered=True),
            patterns=tuple(p for t in op.get_traits_of_type(HasCanonicalizationPatternsTrait)
                           for p in t.get_patterns(cls)),
        )
    return info


def result_only_effects(root: Operation) -> bool:
    """xDSL's `result_only_effects` (whether `root` affects nothing but its
    results: reads, and allocations of values defined inside it), decided by
    the first other effect found, where xDSL collects every effect of every
    nested op first. Ops with `RecursiveMemoryEffect` are looked into; any
    other effect trait answers for its op and what it holds.

    Upstream: `xdsl.transforms.dead_code_elimination.result_only_effects`
    calls `get_effects(root)`, which collects the effects of the whole nest."""

    def quiet(op: Operation) -> bool:
        info = op_class(op)
        if info.no_effects:
            return True
        if not info.effects:
            return False
        for interface in info.effects:
            if isinstance(interface, RecursiveMemoryEffect):
                if not all(quiet(child) for region in op.regions for block in region.blocks
                           for child in reversed(block.ops)):
                    return False
                continue
            effects = interface.get_effects(op)
            if effects is None or not all(
                e.kind == MemoryEffectKind.READ
                or (e.kind == MemoryEffectKind.ALLOC and isinstance(v := e.value, SSAValue) and root.is_ancestor(v.owner))
                for e in effects
            ):
                return False
        return True

    return quiet(root)


def would_be_trivially_dead(op: Operation) -> bool:
    """xDSL's `would_be_trivially_dead`, with `result_only_effects` above."""
    return not op_class(op).kept and result_only_effects(op)


def is_trivially_dead(op: Operation) -> bool:
    """xDSL's `is_trivially_dead`, with `result_only_effects` above."""
    return all(result.first_use is None for result in op.results) and would_be_trivially_dead(op)


class EffectsKind(IntEnum):
    """What an op's effects, nested ops' included, amount to (ordered: a nest is its worst op's kind)."""

    NONE = 0
    """No effect: xDSL's `is_side_effect_free`."""
    READS = 1
    """Reads and nothing else: xDSL's `only_has_effect(op, READ)` but not side-effect free."""
    OTHER = 2
    """A write, allocation or free, or effects not known."""


def effects_kind(op: Operation) -> EffectsKind:
    """The kind of `op`'s effects (`get_effects(op)`'s, nested ops' included),
    decided by the first op that has another effect than reading (upstream
    `is_side_effect_free` and `only_has_effect` each collect every effect of
    the nest: `cse` asked both of every map, at every level of a nest)."""
    info = op_class(op)
    if info.no_effects:
        return EffectsKind.NONE
    if not info.effects:
        return EffectsKind.OTHER
    kind = EffectsKind.NONE
    for interface in info.effects:
        if isinstance(interface, RecursiveMemoryEffect):
            for region in op.regions:
                for block in region.blocks:
                    for child in reversed(block.ops):
                        inner = effects_kind(child)
                        if inner is EffectsKind.OTHER:
                            return inner
                        kind = max(kind, inner)
            continue
        effects = interface.get_effects(op)
        if effects is None:
            return EffectsKind.OTHER
        for e in effects:
            if e.kind != MemoryEffectKind.READ:
                return EffectsKind.OTHER
            kind = EffectsKind.READS
    return kind
