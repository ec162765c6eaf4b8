#!/usr/bin/env bash
# Build the offline bundle that lab/device/fleet.sh runs on a GPU machine without network:
# this checkout (no .git, no reports/) plus .whl/ with what that machine lacks for its Python:
# Ray core repacked into a tarball (lab/repack_ray.py), jsonschema and its dependencies, Plotly
# (the report's chart), and pydantic (from /work/coord/whl for cp312, else downloaded).
#   lab/stage_fleet_bundle.sh [DEST] (default /work/main/.stage/fleet); PY=3.11 for a dry run here.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-/work/main/.stage/fleet}
py=${PY:-3.12}
tag=cp${py/./}
pip=${PIP:-python3 -m pip}
ray_version=${RAY_VERSION:-$(python3 -c 'import ray; print(ray.__version__)' 2>/dev/null || echo 2.60.0)}
cache=${CACHE:-/tmp/fleet-wheels-$tag}
mkdir -p "$cache"
plat=(--only-binary=:all: --python-version "$py" --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64
      --platform manylinux_2_28_x86_64)
$pip download -q --no-deps -d "$cache" "${plat[@]}" "ray==$ray_version" jsonschema jsonschema-specifications \
  referencing rpds-py plotly
if [ "$tag" != cp312 ] || [ ! -d /work/coord/whl ]; then
  $pip download -q -d "$cache/pydantic" "${plat[@]}" pydantic
fi
tarball="$cache/ray-core-$ray_version-$tag.tar.xz"
[ -f "$tarball" ] || python3 "$src/lab/repack_ray.py" "$cache"/ray-"$ray_version"-"$tag"-*.whl -o "$tarball"

case "$dest" in */.stage/*|/tmp/*) rm -rf "$dest" ;; *) echo "refusing to replace $dest (not under .stage/ or /tmp/)"; exit 2 ;; esac
mkdir -p "$dest/.whl"
tar -C "$src" --exclude=./.git --exclude=./.stage --exclude=./reports --exclude=./.whl --exclude=__pycache__ --exclude=.hypothesis \
  --exclude=.ruff_cache --exclude=.pytest_cache -cf - . | tar -C "$dest" -xf -
cp "$tarball" "$dest/.whl/"
for w in jsonschema-[0-9] jsonschema_specifications referencing rpds_py plotly; do cp "$cache"/$w*.whl "$dest/.whl/"; done
if [ "$tag" = cp312 ] && [ -d /work/coord/whl ]; then cp /work/coord/whl/*.whl "$dest/.whl/"; else cp "$cache"/pydantic/*.whl "$dest/.whl/"; fi
echo "bundle $dest: $(du -sh "$dest" | cut -f1) ($(du -sb "$dest" | awk '{printf "%.1f MiB", $1/1048576}')); .whl:"
ls -la "$dest/.whl" | awk 'NR>1 {printf "  %8.1f MiB  %s\n", $5/1048576, $9}'
