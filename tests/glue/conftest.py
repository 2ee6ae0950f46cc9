"""Fixtures shared by the SDPOLoss hook tests (test_sdpo_loss_hook, test_sdpo_variants_hook)."""
import pytest

from tests.glue.test_sdpo_loss_hook import tiny_llama


@pytest.fixture(scope="module")
def model():
    return tiny_llama()
