#!/usr/bin/env bash
# Regenerates crates/segdist-geo/tests/data/postgis_anchor.csv: PostGIS's
# geography distance (spheroid) from lon/lat points to two-vertex lines, the
# anchor tests/postgis_anchor.rs compares segdist-geo with. Needs a running
# PostgreSQL with PostGIS that `psql` reaches (Debian: apt install
# postgresql-15-postgis-3; pg_ctlcluster 15 main start; run as a user with
# access).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=crates/segdist-geo/tests/data/postgis_anchor.csv
PSQL=${PSQL:-psql}
CASES=$(mktemp)
trap 'rm -f "$CASES"' EXIT

# Fixed-seed cases: road-sized segments (10 m to 2 km) with points within
# about 300 m, and long ones (100 to 2000 km) with points within 50 km, at
# every latitude to 80°, some across the antimeridian.
python3 - "$CASES" <<'PY'
import math, random, sys
r = random.Random(7)
rows = []
for i in range(600):
    short = i < 400
    lat = r.uniform(-80, 80)
    lon = 179.9 if i % 25 == 0 else r.uniform(-180, 180)
    ln = r.uniform(10, 2000) if short else r.uniform(1e5, 2e6)
    az = r.uniform(0, 2 * math.pi)
    dlat = ln * math.cos(az) / 111_000
    dlon = ln * math.sin(az) / (111_000 * math.cos(math.radians(lat)))
    b = [lon + dlon, max(-85.0, min(85.0, lat + dlat))]
    t = r.uniform(-0.2, 1.2)
    off = r.uniform(0, 300 if short else 50_000)
    az2 = r.uniform(0, 2 * math.pi)
    plat = lat + t * (b[1] - lat) + off * math.cos(az2) / 111_000
    plon = lon + t * (b[0] - lon) + off * math.sin(az2) / (111_000 * math.cos(math.radians(plat)))
    wrap = lambda x: (x + 180) % 360 - 180
    rows.append((i, wrap(lon), lat, wrap(b[0]), b[1], wrap(plon), max(-89.0, min(89.0, plat))))
with open(sys.argv[1], "w") as f:
    for row in rows:
        f.write(",".join(repr(x) for x in row) + "\n")
PY

{
    echo "-- PostGIS $($PSQL -qAt -c 'SELECT postgis_lib_version()' </dev/null)"
    echo "id,ax,ay,bx,by,px,py,postgis_m"
    $PSQL -qAt -F, <<SQL
CREATE TEMP TABLE c (id int, ax float8, ay float8, bx float8, by float8, px float8, py float8);
COPY c FROM STDIN WITH (FORMAT csv);
$(cat "$CASES")
\.
SELECT id, ax, ay, bx, by, px, py,
       ST_Distance(ST_MakeLine(ST_MakePoint(ax, ay), ST_MakePoint(bx, by))::geography,
                   ST_MakePoint(px, py)::geography, true)
FROM c ORDER BY id;
SQL
} > "$OUT"
echo "wrote $OUT ($(($(wc -l < "$OUT") - 2)) cases)"
