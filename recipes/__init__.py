"""Hydra YAML recipes (package data only): recipe/, sdpo_model/, sdpo_algorithm/, sdpo_task/."""
