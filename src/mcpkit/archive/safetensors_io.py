"""Minimal safetensors reader/writer on numpy (no safetensors/torch dependency).

Format: 8-byte little-endian header length, a JSON header ``{name: {dtype, shape,
data_offsets}}`` (plus optional ``__metadata__``), padded with spaces to 8 bytes, then the raw
little-endian tensor bytes. Upstream stores ``post_ids`` (I64) and ``vectors`` (F32) per chunk,
and ``embed_text`` answers with ``{"vector": F32 [1, dim]}``.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mcpkit.archive.errors import ImportFormatError

_DTYPES: dict[str, str] = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "BOOL": "?",
}
_NAMES = {np.dtype(v).str: k for k, v in _DTYPES.items() if k != "BOOL"}


def loads(data: bytes, source: str = "<bytes>") -> dict[str, npt.NDArray[np.generic]]:
    if len(data) < 8:
        raise ImportFormatError(f"{source}: not a safetensors file (too short)")
    (length,) = struct.unpack("<Q", data[:8])
    if 8 + length > len(data):
        raise ImportFormatError(f"{source}: safetensors header length {length} exceeds the file")
    try:
        header = json.loads(data[8 : 8 + length])
    except ValueError as exc:
        raise ImportFormatError(f"{source}: safetensors header is not JSON") from exc
    body = memoryview(data)[8 + length :]
    out: dict[str, npt.NDArray[np.generic]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype, shape, (begin, end) = spec["dtype"], tuple(spec["shape"]), spec["data_offsets"]
        raw = body[begin:end]
        if dtype == "BF16":
            halves = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            array: npt.NDArray[np.generic] = halves.view(np.float32)
        elif dtype in _DTYPES:
            array = np.frombuffer(raw, dtype=_DTYPES[dtype])
        else:
            raise ImportFormatError(f"{source}: unsupported safetensors dtype {dtype} for {name!r}")
        out[name] = array.reshape(shape)
    return out


def load(path: Path) -> dict[str, npt.NDArray[np.generic]]:
    return loads(Path(path).read_bytes(), str(path))


def dumps(tensors: Mapping[str, npt.ArrayLike]) -> bytes:
    header: dict[str, object] = {}
    blobs: list[bytes] = []
    offset = 0
    for name, value in tensors.items():
        array = np.ascontiguousarray(value)
        dtype = array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype
        key = _NAMES.get(np.dtype(dtype).str)
        if key is None:
            raise ValueError(f"cannot store dtype {array.dtype} in safetensors")
        blob = array.astype(dtype, copy=False).tobytes()
        header[name] = {
            "dtype": key,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)
    return struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs)
