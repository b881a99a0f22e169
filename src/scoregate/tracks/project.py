"""A project's files as every evaluator kind reads them (scoring's and the tracks'; the catalog itself knows none):
loading a project and publishing the JSON Schemas of its file formats (`make schemas`)."""

from __future__ import annotations

import sys
from pathlib import Path

from scoregate.catalog.project import Project, read_project
from scoregate.tracks.registry import all_tracks, evaluator_kinds


def load_project(root: Path) -> Project:
    """Read and validate every project file; raise ValidationFailed listing all problems at once."""
    return read_project(root, evaluator_kinds())


def write_project_schemas(directory: Path) -> list[Path]:
    """Write the JSON Schema of every project file format, and of each track's own files; return the paths."""
    from scoregate.catalog.json_schemas import write_schemas  # `make schemas` only: keep loading a project light

    extra = {name: schema for track in all_tracks() for name, schema in track.schemas().items()}
    return write_schemas(directory, evaluator_kinds(), extra)


if __name__ == "__main__":
    for written_path in write_project_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "schemas")):
        print(written_path)
