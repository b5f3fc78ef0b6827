//! Building a [`RoadGraph`]: the lines' vertices in one array, the nodes
//! where lines meet (shared coordinates, bit for bit, or the data's node
//! ids), the pieces between them and their arcs, and the segment index over
//! them. See the parent module for what a node is.

use rayon::prelude::*;

use super::*;

/// Parts whose lengths one task works out.
const PARTS_A_TASK: usize = 1024;

/// What identifies a node: its coordinates, or an id from the data.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum NodeKey {
    At((u64, u64)),
    Id(u64),
}

/// Bit-exact coordinates, for finding shared vertices.
fn key(p: [f64; 2]) -> (u64, u64) {
    // +0.0 and -0.0 are the same place.
    ((p[0] + 0.0).to_bits(), (p[1] + 0.0).to_bits())
}

impl RoadGraph {
    /// The graph of `b`'s lines (see [`GraphBuilder::build`]).
    pub(super) fn build(b: GraphBuilder) -> Result<RoadGraph, GraphError> {
        let geographic = b.space == Space::Geographic;
        let parts: usize = b.lines.iter().map(|(p, _)| p.len()).sum();
        let total: usize = b.lines.iter().flat_map(|(p, _)| p.iter().map(Vec::len)).sum();
        let mut vertices = Vec::with_capacity(total);
        let (mut part_start, mut line_start) = (Vec::with_capacity(parts + 1), Vec::with_capacity(b.lines.len() + 1));
        for (l, (parts, _)) in b.lines.iter().enumerate() {
            line_start.push(part_start.len());
            for (k, part) in parts.iter().enumerate() {
                if part.len() < 2 {
                    return Err(GraphError::ShortPart { line: l, part: k });
                }
                if let Some(v) = part
                    .iter()
                    .position(|p| !p[0].is_finite() || !p[1].is_finite() || (geographic && p[1].abs() > 90.0))
                {
                    return Err(GraphError::BadVertex { line: l, part: k, vertex: v });
                }
                part_start.push(vertices.len());
                vertices.extend_from_slice(part);
            }
        }
        part_start.push(vertices.len());
        line_start.push(part_start.len() - 1);

        // The segment index is built beside the rest of the graph: it needs
        // only the lines (checked above), and takes some two thirds of the
        // build's time in lon/lat (a geodesic and Earth-centred ends a segment).
        let (search, (cum, segment_piece, pieces, open, out_start, out)) = rayon::join(
            || search_of(&b, vertices.len(), part_start.len()),
            || arcs_of(&b, &vertices, &part_start, &line_start),
        );
        Ok(RoadGraph {
            space: b.space,
            vertices,
            cum,
            part_start,
            line_start,
            segment_piece,
            pieces,
            open,
            out_start,
            out,
            search,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            grids: Mutex::new(Vec::new()),
            tables: Mutex::new(Vec::new()),
        })
    }
}

/// The segment index of `b`'s lines (`vertices` and `parts` in all, for
/// its room), which must be checked: every part of two vertices or more,
/// all finite (and latitudes in [-90, 90] in lon/lat).
fn search_of(b: &GraphBuilder, vertices: usize, parts: usize) -> Search {
    let features = (0..b.lines.len()).map(|l| &b.lines[l].0[..]);
    match b.space {
        Space::Planar => {
            let mut ib = IndexBuilder::<2>::with_capacity(vertices, parts);
            for parts in features {
                ib.push_multi_polyline(parts.iter().map(|p| &p[..]));
            }
            // Every part has two vertices or more, all finite: checked.
            Search::Planar(ib.build().expect("parts checked above"))
        }
        Space::Geographic => Search::Geographic(GeoIndex::from_multi_polylines(features).expect("checked above")),
    }
}

/// What the graph's arcs are made of: the lengths along each part (`cum`),
/// each segment's piece, the pieces, each arc's openness (two a piece),
/// and the arcs out of each node (`out_start`, `out`).
type Arcs = (Vec<f64>, Vec<u32>, Vec<Piece>, Vec<bool>, Vec<u32>, Vec<OutArc>);

/// The nodes, pieces and arcs of `b`'s lines, whose vertices are
/// `vertices`, its parts starting at `part_start` and its lines' parts at
/// `line_start`.
fn arcs_of(b: &GraphBuilder, vertices: &[[f64; 2]], part_start: &[usize], line_start: &[usize]) -> Arcs {
    let parts = part_start.len() - 1;
    // Lengths along each part (a geodesic a segment in lon/lat: on all
    // cores, a run of parts at a time).
    let mut cum = vec![0.0; vertices.len()];
    let (mut runs, mut rest, mut q0) = (Vec::new(), &mut cum[..], 0);
    while q0 + 1 < part_start.len() {
        // Parts q0..q1: their starts and the end of the last.
        let q1 = (q0 + PARTS_A_TASK).min(part_start.len() - 1);
        let w = &part_start[q0..=q1];
        let (here, after) = rest.split_at_mut(w[w.len() - 1] - w[0]);
        runs.push((w, here));
        (rest, q0) = (after, q1);
    }
    runs.into_par_iter().for_each(|(w, out)| {
        let base = w[0];
        for q in 0..w.len() - 1 {
            let (s, e) = (w[q], w[q + 1]);
            for v in s + 1..e {
                out[v - base] = out[v - 1 - base] + seg_len(b.space, vertices[v - 1], vertices[v]);
            }
        }
    });

    // How often each coordinate occurs (a vertex repeating its
    // predecessor counts once).
    let mut seen: FxHashMap<(u64, u64), u32> = FxHashMap::default();
    seen.reserve(vertices.len());
    if b.junctions == Junctions::SharedVertices {
        // Lines with node ids take no part.
        let coordinate_parts =
            (0..b.lines.len()).filter(|&l| b.ends[l].is_none()).flat_map(|l| line_start[l]..line_start[l + 1]);
        for q in coordinate_parts {
            for v in part_start[q]..part_start[q + 1] {
                if v > part_start[q] && key(vertices[v]) == key(vertices[v - 1]) {
                    continue;
                }
                *seen.entry(key(vertices[v])).or_insert(0) += 1;
            }
        }
    }
    // Nodes by coordinates, and by id for lines that give them.
    let mut node_of: FxHashMap<NodeKey, u32> = FxHashMap::default();
    node_of.reserve(2 * parts);
    let mut node = |k: NodeKey| {
        let n = node_of.len() as u32;
        *node_of.entry(k).or_insert(n)
    };

    let mut pieces = Vec::with_capacity(parts);
    let mut open = Vec::with_capacity(2 * parts);
    for (l, (parts, direction)) in b.lines.iter().enumerate() {
        for k in 0..parts.len() {
            let q = line_start[l] + k;
            let (s, e) = (part_start[q], part_start[q + 1] - 1);
            let mut v0 = s;
            for v in s + 1..=e {
                let ids = b.ends[l];
                let junction = v == e || (ids.is_none() && seen.get(&key(vertices[v])).is_some_and(|&c| c > 1));
                if !junction {
                    continue;
                }
                let (from, to) = match ids {
                    Some((f, t)) => (node(NodeKey::Id(f)), node(NodeKey::Id(t))),
                    None => (node(NodeKey::At(key(vertices[v0]))), node(NodeKey::At(key(vertices[v])))),
                };
                pieces.push(Piece { line: l as u32, v0: v0 as u32, v1: v as u32, from, to, len: cum[v] - cum[v0] });
                open.push(*direction != Direction::Backward);
                open.push(*direction != Direction::Forward);
                v0 = v;
            }
        }
    }
    let mut segment_piece = vec![0u32; vertices.len()];
    for (i, pc) in pieces.iter().enumerate() {
        segment_piece[pc.v0 as usize..pc.v1 as usize].fill(i as u32);
    }

    let nodes = node_of.len();
    let mut out_start = vec![0u32; nodes + 1];
    let tail = |a: usize| if a.is_multiple_of(2) { pieces[a / 2].from } else { pieces[a / 2].to };
    for (a, _) in open.iter().enumerate().filter(|(_, o)| **o) {
        out_start[tail(a) as usize + 1] += 1;
    }
    for n in 0..nodes {
        out_start[n + 1] += out_start[n];
    }
    let mut fill = out_start.clone();
    let head = |a: usize| if a.is_multiple_of(2) { pieces[a / 2].to } else { pieces[a / 2].from };
    let mut out = vec![OutArc { arc: 0, head: 0, len: 0.0 }; out_start[nodes] as usize];
    for (a, _) in open.iter().enumerate().filter(|(_, o)| **o) {
        let t = tail(a) as usize;
        out[fill[t] as usize] = OutArc { arc: a as u32, head: head(a), len: pieces[a / 2].len };
        fill[t] += 1;
    }

    (cum, segment_piece, pieces, open, out_start, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lengths along the parts, worked out a run of parts a task, are
    /// those of one loop over all parts: across the runs' borders too, in
    /// metres and in lon/lat.
    #[test]
    fn lengths_along_parts_worked_out_in_runs_equal_one_loop() {
        for space in [Space::Planar, Space::Geographic] {
            let mut b = GraphBuilder::new(space);
            // More parts than three runs, of 2 to 5 vertices.
            for l in 0..3 * PARTS_A_TASK / 2 + 7 {
                let f = l as f64 * 1e-3;
                let part = |n: usize, o: f64| (0..n).map(|i| [24.9 + f + i as f64 * 1e-4, 60.1 + o + f * f]).collect();
                b.push_line(vec![part(2 + l % 4, 0.0), part(2 + l % 3, 0.5)], Direction::Both);
            }
            let g = b.build().unwrap();
            assert!(g.part_start.len() > 2 * PARTS_A_TASK + 1);
            for q in 0..g.part_start.len() - 1 {
                let (s, e) = (g.part_start[q], g.part_start[q + 1]);
                let mut at = 0.0;
                assert_eq!(g.cum[s].to_bits(), 0.0f64.to_bits());
                for v in s + 1..e {
                    at += seg_len(space, g.vertices[v - 1], g.vertices[v]);
                    assert_eq!(g.cum[v].to_bits(), at.to_bits(), "{space:?} part {q} vertex {v}");
                }
            }
        }
    }
}
