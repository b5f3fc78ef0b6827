#!/usr/bin/env bash
# End to end: `segdist snap` of 1,000,000 CSV points against 100,000 segments
# (WKT), against the shapely route (scripts/snap_shapely.py), on the same files.
#
#   scripts/snap_e2e.sh [DIR] [POINTS]      # needs: pip install shapely numpy pandas
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-target/snap-e2e}
points=${2:-1000000}
cargo build --release --locked -q -p segdist-cli -p segdist-bench
target/release/segdist-bench snap-data "$dir" "$points" 100000
echo "segdist:"
/usr/bin/time -f "  wall %e s, peak RSS %M KB" \
  target/release/segdist snap --keep none --points "$dir/points.csv" --lines "$dir/lines.wkt" --out "$dir/segdist.csv" --timings
echo "shapely:"
/usr/bin/time -f "  wall %e s, peak RSS %M KB" python3 scripts/snap_shapely.py "$dir"
