"""The model every other layer shares: the hierarchy tree (:mod:`.tree`), the
reading of cells (:mod:`.cells`), the encoded table (:mod:`.table`),
requirements (:mod:`.requirements`), the distortion cost algorithms minimise
(:mod:`.cost`), and the plumbing: compiled kernels (:mod:`.jit`), progress
(:mod:`.progress`), file checks (:mod:`.files`), safe YAML (:mod:`.safeyaml`)
and the bibliography (:mod:`.references`). Nothing here imports another layer."""
