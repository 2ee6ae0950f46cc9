"""Start-up checks that run before Ray starts: the Hydra callback and the config checks (`checks`), the type and range
of the plugin's config values (`config_values`), the machine's GPUs, data and model (`preflight`), what the data
files hold (`data_files`), small-host sizing (`small_host`) and the attention implementation (`attention`); the checks
alone, without a run (`check`, a CLI); and the start-up timeline's phase marks (`timeline`).
verl only lazily, inside the checks that need it (the run config, the TTRL dataset); this file imports nothing.
"""
