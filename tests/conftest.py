import os

import pytest
import warp as wp

wp.config.log_level = wp.LOG_WARNING
wp.init()

DEVICES = ["cpu"] + (["cuda:0"] if wp.is_cuda_available() else [])


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param
