"""One indirect spelling of the alias per file, so that each form is the only
thing that can let its file through the prefilter's ast gate."""
