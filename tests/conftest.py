import os

import pytest
import warp as wp

wp.config.log_level = wp.LOG_WARNING
wp.init()

DEVICES = ["cpu"] + (["cuda:0"] if wp.is_cuda_available() else [])

#: the skip reason of every test marked ``@pytest.mark.cuda`` on a machine without CUDA
NO_CUDA = "no CUDA device"


def pytest_configure(config):
    # also registered in pyproject.toml; repeated here so a run from another rootdir knows it too
    config.addinivalue_line("markers", "cuda: needs a CUDA device (collected everywhere, skipped without one)")


def pytest_collection_modifyitems(config, items):
    if wp.is_cuda_available():
        return
    skip = pytest.mark.skip(reason=NO_CUDA)
    for item in items:
        if item.get_closest_marker("cuda") is not None:
            item.add_marker(skip)


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param
