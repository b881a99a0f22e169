"""A score's per-item values kept compactly: 9 bytes an item (a float and a measured flag), not a Python object each."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np


class FloatColumn(Sequence[float | None]):
    """Per-item values of one score in the order items were added; None is an unmeasured item.

    A list of 100,000 Python floats holds ~3.2 MB per score (a pointer and an object each); this holds 0.9 MB,
    and hands the measured values to numpy without a copy per item.
    """

    def __init__(self, values: Sequence[float | None] = ()) -> None:
        self._values = array("d")
        self._measured = bytearray()
        for value in values:
            self.append(value)

    def append(self, value: float | None) -> None:
        """Add one item's value (None = not measured)."""
        self._values.append(0.0 if value is None else value)
        self._measured.append(value is not None)

    def __len__(self) -> int:
        return len(self._values)

    @overload
    def __getitem__(self, index: int) -> float | None: ...

    @overload
    def __getitem__(self, index: slice) -> list[float | None]: ...

    def __getitem__(self, index: int | slice) -> float | list[float | None] | None:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._values[index] if self._measured[index] else None

    def __iter__(self) -> Iterator[float | None]:
        for value, measured in zip(self._values, self._measured, strict=True):
            yield value if measured else None

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(values, measured mask) as numpy arrays in item order; an unmeasured item's value is 0."""
        values = np.array(self._values, dtype=np.float64) if self._values else np.zeros(0)
        return values, np.array(self._measured, dtype=bool) if self._measured else np.zeros(0, dtype=bool)

    def measured(self) -> np.ndarray:
        """The measured values as a float array, in item order."""
        values, mask = self.arrays()
        return values[mask]
