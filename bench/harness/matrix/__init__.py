"""bench/harness/matrix - the parts of the kernels' benchmark matrix that
bench/harness/run.py runs (its command line and the order of the runs):
config (kernels, configurations, goals), machine (description, load),
runs (executables, one run, transport costs), summary (medians, ratios,
goals), report (markdown and csv)."""
