"""The time bound on our own code working on data we did not write (`mathbode.core.bounds`)."""

from __future__ import annotations

import time

import pytest

from mathbode.core.bounds import OutOfTime, time_bound


def test_a_bound_whose_first_alarm_is_lost_still_ends_the_code():
    """An exception raised where Python cannot pass it on (a garbage-collector callback, as
    hypothesis installs one) is lost; the alarm fires again until the bounded code ends. A
    family file's 20,000-term sum ran on past its bound this way under the full suite."""
    swallowed = 0
    start = time.monotonic()
    with pytest.raises(OutOfTime):
        with time_bound(0.5):
            while time.monotonic() - start < 5:  # a lost alarm and no second one: fails, never hangs
                try:
                    while time.monotonic() - start < 5:
                        pass
                except OutOfTime:
                    if swallowed:
                        raise
                    swallowed += 1  # what a gc callback does to it
    assert swallowed == 1 and time.monotonic() - start < 5


def test_a_bound_that_ends_in_time_leaves_no_alarm_behind():
    with time_bound(0.3):
        pass
    time.sleep(0.8)  # a stray alarm would raise here (or kill the process: SIGALRM's default)
