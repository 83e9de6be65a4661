"""Where no `demo` runs, a worker started with MINUTES_LOCAL_MODEL_START starts the local model
server as it starts (a web request never does), and one without it starts nothing."""

from __future__ import annotations

import pytest

from config.celery import start_local_model
from services import local_model
from tests.local_model.conftest import free_port

pytestmark = pytest.mark.slow


@pytest.fixture
def address(settings, tmp_path):
    why = local_model.missing()
    if why:
        pytest.skip(f"local model not available: {why}")
    settings.HOME = tmp_path  # its log
    base = f"http://127.0.0.1:{free_port()}/v1"
    settings.MODELS = {**settings.MODELS, "MINUTES_LOCAL_MODEL_URL": base}
    yield base
    if local_model._started is not None:
        local_model._started.stop()
        local_model._started = None


def test_a_worker_without_the_setting_starts_no_model_server(address, settings):
    settings.LOCAL_MODEL_START = False
    start_local_model()
    assert not local_model.healthy(address)


def test_a_worker_with_the_setting_starts_the_model_server_before_taking_work(address, settings):
    settings.LOCAL_MODEL_START = True
    start_local_model()  # connected to worker_init: what `celery worker` runs as it starts
    assert local_model.healthy(address)
    assert (settings.HOME / "local-model.log").is_file()
    # It reads prompts in with flash attention, as the demo's server and the suite's do.
    started = local_model._started
    assert started is not None and started.process is not None
    arguments = list(started.process.args)
    assert "--flash_attn" in arguments
    assert arguments[arguments.index("--flash_attn") + 1] == "True"
