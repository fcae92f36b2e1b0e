"""``hieranon check``: the k, risk and privacy a table achieves as it is."""

from __future__ import annotations

import json
from typing import Optional

import typer

from .errors import EXIT_FAILED, EXIT_OK, UsageError, die, known_errors, one_line
from .files import read_checked, require_rows, table_source
from .options import (
    BetaOption,
    ClassColumnOption,
    ConfigOption,
    CountColumnOption,
    SudaMaxSizeOption,
    WeightOption,
    EncodingOption,
    IdentifierOption,
    InsensitiveOption,
    JsonOption,
    KOption,
    LDiversityOption,
    MissingOption,
    QiOption,
    QuietOption,
    RequireOption,
    PopulationOption,
    PopulationTableOption,
    QueryOption,
    RiskThresholdOption,
    SamplingFractionOption,
    SensitiveHierarchyOption,
    SensitiveOption,
    StrictOption,
    SuppressedOption,
    TableOption,
    TClosenessOption,
    WeightsOption,
    build_hierarchies,
    build_spec,
    role_columns,
    check_suppressed,
    read_config,
    read_population_table,
)
from .output import configure_logging, json_default, print_metrics, warn


def check(
    input: Optional[str] = typer.Argument(None, help="Table to check as it is (a file, or a database URL with "
                                          "--table or --query; default: the configuration's input)."),
    table: TableOption = None,
    query: QueryOption = None,
    config: ConfigOption = None,
    qi: QiOption = [],
    k: KOption = None,
    require: RequireOption = [],
    count_column: CountColumnOption = None,
    weight: WeightOption = None,
    suda_max_size: SudaMaxSizeOption = None,
    class_column: ClassColumnOption = None,
    missing: MissingOption = None,
    weights: WeightsOption = None,
    beta: BetaOption = None,
    risk_threshold: RiskThresholdOption = None,
    sampling_fraction: SamplingFractionOption = None,
    population: PopulationOption = None,
    population_table: PopulationTableOption = None,
    l_diversity: LDiversityOption = [],
    t_closeness: TClosenessOption = [],
    sensitive_hierarchy: SensitiveHierarchyOption = [],
    as_json: JsonOption = False,
    quiet: QuietOption = False,
    encoding: EncodingOption = "utf-8",
    strict: StrictOption = None,
    identifier: IdentifierOption = [],
    sensitive: SensitiveOption = [],
    insensitive: InsensitiveOption = [],
    suppressed: SuppressedOption = "class",
):
    """Report the k a table achieves as it is, its risk, its class-size
    distribution, the classes below each requirement, and the columns without
    a role or at risk of linkage (near-unique, or nearly a copy of a
    quasi-identifier)."""
    configure_logging(True, False)
    try:
        from ..privacy import RiskModel, assess_privacy
        from ..evaluation.risk import assess
        from ..job.problem import build_problem
        cfg = read_config(config)  # read once: it may name the input table
        input = table_source(input, table, query, config=cfg)
        data = read_checked(input, encoding, True)
        require_rows(data, input)
        spec = build_spec(cfg, qi, k, require, missing=missing, beta=beta, risk_threshold=risk_threshold,
                          sampling_fraction=sampling_fraction, population=population,
                          population_table=read_population_table(population_table, encoding, population, cfg),
                          weights=weights, count_column=count_column, class_column=class_column,
                          weight_column=weight, suda_max_size=suda_max_size,
                          l_diversity=l_diversity, t_closeness=t_closeness, sensitive_hierarchy=sensitive_hierarchy,
                          strict=strict,
                          roles=role_columns(identifier, sensitive, insensitive))
        from ..evaluation.roles import assess_roles
        roles = assess_roles(data, spec)
        if spec.strict and roles.unclassified:
            raise UsageError(f"strict: {roles.warning()}")
        # a published (already generalised) table can be checked too
        check_suppressed(suppressed)
        prepared = build_problem(data, spec, generalised=True, hierarchies=build_hierarchies(spec, data))
        reqs = prepared.problem.requirements
        table, models, weights = _without_suppressed(prepared) if suppressed == "removed" else \
            (prepared.table, prepared.problem.privacy, prepared.problem.weights)
        result = assess(table, reqs, threshold=spec.threshold_for(reqs), population=spec.population,
                        weights=weights, weight_column=spec.weight_column, suda_max_size=spec.suda_max_size)
        risk_models = [m.bind(table) for m in spec.privacy if isinstance(m, RiskModel)]
        privacy = assess_privacy(models, table.codes, counts=table.counts, sensitive=spec.sensitive,
                                 risk=risk_models)
        k_max = max((r.k for r in reqs), default=None)  # class-size bins are chosen relative to it
        records = int(table.counts.sum())
    except known_errors() as exc:
        die(one_line(exc))
    ok = result.ok and privacy.ok
    if as_json:
        typer.echo(json.dumps({**result.as_dict(), "ok": ok, "class_size_distribution": result.size_distribution(k_max),
                               "privacy": privacy.as_dict(), **roles.as_dict()}, default=json_default, indent=2))
    elif not quiet:
        print_metrics(f"check of {input.name}", result.rows(k_max, distribution=True) + privacy.rows(), False)
        for line in ([roles.warning()] if roles.unclassified else []) + roles.linkage_lines():
            warn(line)
        for k_over in sorted({r.k for r in reqs if r.k > records}):
            warn(f"k = {k_over} exceeds the {records} records of the table: no release of it can meet it")
    raise typer.Exit(EXIT_OK if ok else EXIT_FAILED)


def _without_suppressed(prepared):
    """The checked table, its privacy models and its sampling weights without the rows printing '*'
    everywhere (the 'removed' convention: suppressed records not published)."""
    import numpy as np

    from ..core.table import EncodedTable

    t = prepared.table
    keep = np.flatnonzero(~(t.codes == 0).all(axis=1))
    if len(keep) == 0:
        raise UsageError("--suppressed removed: every row is suppressed ('*' in every quasi-identifier); nothing "
                         "is left to check")
    weights = prepared.problem.weights
    return (EncodedTable(t.codes[keep], t.hierarchies, t.qi_names, t.counts[keep]),
            [b.subset(keep) for b in prepared.problem.privacy], None if weights is None else weights[keep])
