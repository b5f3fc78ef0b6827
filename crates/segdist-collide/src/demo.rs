//! A generated level and a wandering crowd, shared by the example
//! (`examples/crowd.rs`), the bench and the tests. Not part of the API.

use crate::{Agent, Move, MoveOptions, WallSet};

/// A small deterministic generator (xorshift64*), so the level and the
/// crowd are the same bits everywhere without a dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in `[0, n)`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.unit() * n as f64) as usize
    }
}

/// A maze of `cols × rows` unit cells with walls on the cells' edges (one
/// unit segment each), carved as a perfect maze and then opened: each
/// inner wall left is removed with probability `open`, which makes loops
/// and halls for a crowd to wander. Corner `(0, 0)`, `off` added to every
/// coordinate.
pub fn maze(cols: usize, rows: usize, open: f64, seed: u64, off: f64) -> Vec<[[f64; 2]; 2]> {
    let mut rng = Rng::new(seed);
    // right[c]: the wall east of cell c; up[c]: the wall north of it.
    let n = cols * rows;
    let (mut right, mut up) = (vec![true; n], vec![true; n]);
    let mut seen = vec![false; n];
    let mut stack = vec![0usize];
    seen[0] = true;
    while let Some(&c) = stack.last() {
        let (x, y) = (c % cols, c / cols);
        let mut next = [(0usize, 0u8); 4];
        let mut k = 0;
        for (dx, dy, dir) in [(1i64, 0i64, 0u8), (-1, 0, 1), (0, 1, 2), (0, -1, 3)] {
            let (nx, ny) = (x as i64 + dx, y as i64 + dy);
            if nx >= 0
                && ny >= 0
                && (nx as usize) < cols
                && (ny as usize) < rows
                && !seen[ny as usize * cols + nx as usize]
            {
                next[k] = (ny as usize * cols + nx as usize, dir);
                k += 1;
            }
        }
        if k == 0 {
            stack.pop();
            continue;
        }
        let (m, dir) = next[rng.below(k)];
        match dir {
            0 => right[c] = false,
            1 => right[m] = false,
            2 => up[c] = false,
            _ => up[m] = false,
        }
        seen[m] = true;
        stack.push(m);
    }
    let mut walls = Vec::new();
    let seg = |a: [f64; 2], b: [f64; 2]| [[a[0] + off, a[1] + off], [b[0] + off, b[1] + off]];
    for c in 0..n {
        let (x, y) = ((c % cols) as f64, (c / cols) as f64);
        let inner_r = c % cols + 1 < cols;
        let inner_u = c / cols + 1 < rows;
        if right[c] && (!inner_r || rng.unit() >= open) {
            walls.push(seg([x + 1.0, y], [x + 1.0, y + 1.0]));
        }
        if up[c] && (!inner_u || rng.unit() >= open) {
            walls.push(seg([x, y + 1.0], [x + 1.0, y + 1.0]));
        }
    }
    for x in 0..cols {
        walls.push(seg([x as f64, 0.0], [x as f64 + 1.0, 0.0]));
    }
    for y in 0..rows {
        walls.push(seg([0.0, y as f64], [0.0, y as f64 + 1.0]));
    }
    walls
}

/// The maze as a wall set.
pub fn maze_walls(cols: usize, rows: usize, open: f64, seed: u64, off: f64) -> WallSet {
    let mut b = WallSet::builder();
    for [a, c] in maze(cols, rows, open, seed, off) {
        b.push_segment(a, c);
    }
    b.build().expect("finite coordinates")
}

/// Agents wandering a `cols × rows` maze: each keeps a heading, turns a
/// little at random each frame and turns away when it meets a wall.
#[derive(Clone, Debug)]
pub struct Crowd {
    /// The agents (motion is this frame's).
    pub agents: Vec<Agent<[f64; 2]>>,
    headings: Vec<f64>,
    speed: f64,
    rng: Rng,
}

impl Crowd {
    /// `n` agents of radius 0.2–0.3 at free cell centres, speed `speed`
    /// units a frame.
    pub fn new(walls: &WallSet, cols: usize, rows: usize, n: usize, speed: f64, seed: u64, off: f64) -> Crowd {
        let mut rng = Rng::new(seed);
        let mut agents = Vec::with_capacity(n);
        while agents.len() < n {
            let (x, y) = (rng.below(cols) as f64 + 0.5 + off, rng.below(rows) as f64 + 0.5 + off);
            let radius = 0.2 + 0.1 * rng.unit();
            if walls.overlap([x, y], radius).is_empty() {
                agents.push(Agent { position: [x, y], radius, motion: [0.0, 0.0] });
            }
        }
        let headings = (0..n).map(|_| rng.unit() * core::f64::consts::TAU).collect();
        Crowd { agents, headings, speed, rng }
    }

    /// Sets every agent's motion for the next frame.
    pub fn steer(&mut self) {
        for (a, h) in self.agents.iter_mut().zip(&mut self.headings) {
            *h += (self.rng.unit() - 0.5) * 0.3;
            a.motion = [self.speed * h.cos(), self.speed * h.sin()];
        }
    }

    /// Takes a frame's moves: new positions, and a new heading for each
    /// agent that met a wall (away from it, a little at random).
    pub fn apply(&mut self, moves: &[Move<[f64; 2]>]) {
        for (i, m) in moves.iter().enumerate() {
            self.apply_one(i, m.position, m.contact.map(|c| c.normal));
        }
    }

    /// Takes agent `i`'s move (for movers other than this crate's): its new
    /// position and the normal of the wall it met, if any.
    pub fn apply_one(&mut self, i: usize, position: [f64; 2], normal: Option<[f64; 2]>) {
        self.agents[i].position = position;
        if let Some(n) = normal {
            self.headings[i] = n[1].atan2(n[0]) + (self.rng.unit() - 0.5) * 2.5;
        }
    }

    /// One frame: steer, move all on all cores, apply.
    pub fn step(&mut self, walls: &WallSet, opts: &MoveOptions, moves: &mut Vec<Move<[f64; 2]>>) {
        self.steer();
        walls.move_and_slide_many_into(&self.agents, opts, moves);
        self.apply(moves);
    }
}
