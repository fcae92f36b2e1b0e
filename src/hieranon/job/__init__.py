"""One anonymisation job: the configuration file (:mod:`.config`), the
specification it becomes (:mod:`.spec`), the run from input table to verified
output (:mod:`.pipeline`: :func:`~.pipeline.anonymize`), what a run returns
(:mod:`.result`) and the out-of-core runs of large Parquet inputs
(:mod:`.scale`)."""
