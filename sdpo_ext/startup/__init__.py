"""Start-up checks that run before Ray starts: the Hydra callback and the config checks (`checks`), the type and range
of the plugin's config values (`config_values`), the machine's GPUs, data and model (`preflight`), what the data
files hold (`data_files`), vLLM's KV cache given in bytes (`kv_cache`), small-host sizing (`small_host`) and the
attention implementation (`attention`); the checks
alone, without a run (`check`, a CLI); the start-up timeline's phase marks (`timeline`); and verl's config composed
with a recipe as main_ppo composes it (`compose`: the one helper for the tests, the pre-flight and the tools).
verl only lazily, inside the checks that need it (the run config, the TTRL dataset); this file imports nothing.
"""
