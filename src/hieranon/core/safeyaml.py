"""The one YAML reader for every YAML text the tool reads: configurations,
hierarchy files, ``--param`` values and the files shipped with the package.

It is PyYAML's :class:`yaml.SafeLoader` (only plain data: mappings, lists,
text, numbers, booleans, dates) with the limits a hostile or careless input
needs:

* a key given twice in one mapping is refused, at any depth, naming the key
  and both lines (plain PyYAML keeps the last value silently, so ``k: 5`` and
  later ``k: 2`` would run with k = 2); keys brought in by a merge key
  (``<<: *defaults``) may be overridden, as YAML intends;
* nesting deeper than :data:`MAX_DEPTH` levels is refused before the
  recursive composer could exhaust Python's stack;
* aliases are limited: at most :data:`MAX_ALIASES` of them, and the document
  as expanded through its aliases may hold at most :data:`MAX_ALIAS_NODES`
  nodes more than it is written with, and no deeper than :data:`MAX_DEPTH`;
  a self-referencing alias is refused. An alias bomb ("billion laughs") is
  thus refused on its written size, before anything expands it;
* every message is one line naming the source and line, quoting at most
  :data:`QUOTE_CHARS` characters of the input.

Errors are raised as the caller's error type (``error=``), so a configuration
fails with :class:`~hieranon.job.config.ConfigError` and a hierarchy file with
:class:`~hieranon.hierarchies.readers.HierarchyError`.
"""

from __future__ import annotations

from typing import Any

from .files import excerpt, shorten

# PyYAML is imported where YAML is parsed: the safe loader class is built on first use (_loader_class)

__all__ = ["YAMLInputError", "load_yaml", "MAX_DEPTH", "MAX_ALIASES", "MAX_ALIAS_NODES", "QUOTE_CHARS"]

#: Deepest nesting of mappings and lists (a hierarchy tree of this height is far beyond any real one).
MAX_DEPTH = 100
#: Most aliases (``*name``) in one document.
MAX_ALIASES = 1000
#: Most nodes the aliases may add to the document when expanded.
MAX_ALIAS_NODES = 100_000
#: Characters of the input a message quotes.
QUOTE_CHARS = 80


class YAMLInputError(ValueError):
    """A YAML text is malformed or over a limit (the default error type of :func:`load_yaml`)."""


class _Refused(Exception):
    """Raised inside the loader; :func:`load_yaml` turns it into the caller's error type."""

    def __init__(self, message: str, mark=None):
        super().__init__(message)
        self.message = message
        self.mark = mark


def _loader_class():
    import yaml
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    class Loader(yaml.SafeLoader):
        """SafeLoader with duplicate keys refused and depth and aliases limited."""

        def __init__(self, stream):
            super().__init__(stream)
            self._depth = 0
            self._aliases = 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                self._aliases += 1
                if self._aliases > MAX_ALIASES:
                    raise _Refused(f"more than {MAX_ALIASES} aliases (*name); write the values out",
                                   self.peek_event().start_mark)
                return super().compose_node(parent, index)
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    raise _Refused(f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def compose_document(self):
            node = super().compose_document()
            if self._aliases:
                _check_expansion(node)
            return node

        def construct_mapping(self, node, deep=False):
            if isinstance(node, MappingNode):
                seen: dict = {}
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue
                    key = self.construct_object(key_node, deep=True)
                    try:
                        first = seen.setdefault(key, key_node)
                    except TypeError:  # an unhashable key: the constructor names it
                        continue
                    if first is not key_node:
                        raise _Refused(f"key {excerpt(key, QUOTE_CHARS)} is given twice, on line "
                                       f"{first.start_mark.line + 1} and line {key_node.start_mark.line + 1}; "
                                       "keep one of them", key_node.start_mark)
            return super().construct_mapping(node, deep=deep)

    def _check_expansion(root) -> None:
        """Refuse a document whose aliases expand it by more than
        :data:`MAX_ALIAS_NODES` nodes or beyond :data:`MAX_DEPTH` levels, or
        that refers to itself; measured on the composed graph (each node once)."""
        size: dict[int, int] = {}
        height: dict[int, int] = {}
        open_: set[int] = set()
        written = set()

        def children(node):
            if isinstance(node, SequenceNode):
                return node.value
            if isinstance(node, MappingNode):
                return [n for pair in node.value for n in pair]
            return []

        def count_written(node) -> None:
            stack = [node]
            while stack:
                n = stack.pop()
                if id(n) not in written:
                    written.add(id(n))
                    stack.extend(children(n))

        def visit(node, depth: int) -> None:
            key = id(node)
            if key in open_:
                raise _Refused("an alias refers to the node it is inside (a recursive structure); "
                               "write the values out", node.start_mark)
            if key in size:
                if depth + height[key] > MAX_DEPTH + 1:
                    raise _Refused(f"nested more than {MAX_DEPTH} levels deep once its aliases are expanded",
                                   node.start_mark)
                return
            if depth > MAX_DEPTH:
                raise _Refused(f"nested more than {MAX_DEPTH} levels deep once its aliases are expanded",
                               node.start_mark)
            open_.add(key)
            total, tallest = 1, 0
            for child in children(node):
                visit(child, depth + 1)
                total += size[id(child)]
                tallest = max(tallest, height[id(child)])
            open_.discard(key)
            size[key], height[key] = total, tallest + 1
            if total > len(written) + MAX_ALIAS_NODES:
                raise _Refused(f"its aliases expand it to more than {MAX_ALIAS_NODES} nodes beyond those written "
                               "(an alias bomb?); write the values out", node.start_mark)

        if root is None or isinstance(root, ScalarNode):
            return
        count_written(root)
        visit(root, 1)

    return Loader


_LOADER = None


def load_yaml(text: str, *, source: str, error: type[Exception] = YAMLInputError) -> Any:
    """The data of one YAML document, read safely (see the module's
    docstring); any fault is ``error`` with one line starting with
    ``source`` (e.g. ``"configuration file cfg.yaml"``) and naming the line."""
    global _LOADER
    import yaml

    if _LOADER is None:
        _LOADER = _loader_class()
    loader = None
    try:
        loader = _LOADER(text)  # its reader refuses control characters at once
        return loader.get_single_data()
    except _Refused as exc:
        raise error(f"{source}{_where(exc.mark)}: {exc.message}") from None
    except yaml.MarkedYAMLError as exc:
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        raise error(f"{source} is not valid YAML{_where(exc.problem_mark or exc.context_mark)}: "
                    f"{_cut(problem)}") from None
    except yaml.YAMLError as exc:
        raise error(f"{source} is not valid YAML: {_cut(shorten(exc))}") from None
    except RecursionError:  # a limit above should have refused it first
        raise error(f"{source}: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()


def _where(mark) -> str:
    return "" if mark is None else f", line {mark.line + 1}, column {mark.column + 1}"


def _cut(text: str) -> str:
    """At most :data:`QUOTE_CHARS` characters of a parser's problem text (it may quote the input)."""
    return text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "..."
