"""Hierarchies from files and from data: the readers of hierarchy files
(:mod:`.readers`: ARX CSV, nested mappings, YAML/JSON) and the builders that
derive a hierarchy from a column (:mod:`.builders`: intervals, masking,
groupings, dates). The tree they build is :class:`hieranon.core.tree.Hierarchy`."""
