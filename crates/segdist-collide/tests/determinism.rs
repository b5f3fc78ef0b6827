//! The same input gives the same bits: one thread against two, the batch
//! against one agent at a time, and a fingerprint of a whole simulation
//! that any other machine (another instruction set, FMA or not, another
//! thread count) must reproduce bit for bit.

use segdist_collide::__testing::{maze_walls, Crowd};
use segdist_collide::{Move, MoveOptions};

fn simulate(threads: usize, frames: usize) -> Vec<Move<[f64; 2]>> {
    let walls = maze_walls(40, 40, 0.3, 3, 0.0);
    let mut crowd = Crowd::new(&walls, 40, 40, 1500, 0.08, 4, 0.0);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let opts = MoveOptions::default();
    let mut moves = Vec::new();
    let mut all = Vec::new();
    for _ in 0..frames {
        pool.install(|| crowd.step(&walls, &opts, &mut moves));
        all.extend_from_slice(&moves);
    }
    all
}

fn bits(moves: &[Move<[f64; 2]>]) -> Vec<u64> {
    moves
        .iter()
        .flat_map(|m| {
            let c = m.contact.map_or([0.0; 7], |c| {
                [c.fraction, c.position[0], c.position[1], c.point[0], c.point[1], c.normal[0], c.normal[1]]
            });
            [m.position[0], m.position[1]]
                .into_iter()
                .chain(c)
                .map(f64::to_bits)
                .chain([u64::from(m.hits), m.stopped as u64])
        })
        .collect()
}

#[test]
fn one_thread_and_two_give_the_same_bits() {
    assert_eq!(bits(&simulate(1, 40)), bits(&simulate(2, 40)));
}

#[test]
fn the_batch_gives_what_one_at_a_time_gives() {
    let walls = maze_walls(40, 40, 0.3, 3, 0.0);
    let mut crowd = Crowd::new(&walls, 40, 40, 1500, 0.08, 4, 0.0);
    let opts = MoveOptions::default();
    let mut moves = Vec::new();
    for _ in 0..20 {
        crowd.steer();
        walls.move_and_slide_many_into(&crowd.agents, &opts, &mut moves);
        let one: Vec<_> =
            crowd.agents.iter().map(|a| walls.move_and_slide(a.position, a.radius, a.motion, &opts)).collect();
        assert_eq!(bits(&moves), bits(&one));
        crowd.apply(&moves);
    }
}

/// FNV-1a over the bits of every move of 40 frames of 1,500 agents.
#[test]
fn a_simulation_reproduces_its_fingerprint() {
    let h = bits(&simulate(2, 40))
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b).wrapping_mul(0x0000_0100_0000_01b3));
    // Recorded on x86-64 (AVX-512 and FMA); a machine that gives another
    // value does not reproduce the simulation.
    assert_eq!(h, FINGERPRINT, "fingerprint {h:#018x}");
}

const FINGERPRINT: u64 = 0xa2f6_1297_3c2c_2bcc;
