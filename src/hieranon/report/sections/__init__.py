"""The sections of the HTML report (:mod:`hieranon.report`), grouped by what they
tell the data custodian: what was done and whether it worked
(:mod:`~hieranon.report.sections.overview`), what it bought
(:mod:`~hieranon.report.sections.risk`), how the data was generalised
(:mod:`~hieranon.report.sections.classes`), what it cost for analysis
(:mod:`~hieranon.report.sections.utility`) and the measures, timings and
sample (:mod:`~hieranon.report.sections.measures`). Each section is a
function returning its HTML."""
