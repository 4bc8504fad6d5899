"""Arrow scalars made with their type, for compute calls on the update path.

Handed a bare Python value (``pc.greater(column, 0)``), pyarrow infers its type, and each
inference tries to import ``dateutil`` (to recognise its ``relativedelta``); where dateutil
is not installed, every attempt searches ``sys.path`` again: about 0.2 ms each, some 30
times in a one-file update of cpp-docs. A typed scalar skips the inference.
"""

from __future__ import annotations

import pyarrow as pa


def int64(value: int) -> pa.Scalar:
    return pa.scalar(value, pa.int64())


def string(value: str) -> pa.Scalar:
    return pa.scalar(value, pa.string())
