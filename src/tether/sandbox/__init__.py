"""tether's sandbox: the agent of every run touches only its own work.

``spec`` says what a sandbox is made of, ``backend`` picks the mechanism for
this machine (Linux: ``bwrap``), ``launcher`` is the first program inside,
``network`` the allow-list proxy outside, ``runtime`` one sandbox while its
run lasts. What a run puts in it is decided in ``tether.runs.sandboxing``.
"""
