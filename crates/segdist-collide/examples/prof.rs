use segdist_collide::__testing::{maze, Crowd};
use segdist_collide::{MoveOptions, WallSet};
fn main() {
    let size = 377;
    let segs = maze(size, size, 0.3, 7, 0.0);
    let mut b = WallSet::builder();
    if let Some(h) = std::env::var("H").ok().and_then(|t| t.parse().ok()) {
        b.cell_size(h);
    }
    for [p, q] in &segs {
        b.push_segment(*p, *q);
    }
    let walls = b.build().unwrap();
    let mut crowd = Crowd::new(&walls, size, size, 10000, 0.05, 11, 0.0);
    let opts = MoveOptions::default();
    let threads: usize = std::env::var("T").ok().and_then(|t| t.parse().ok()).unwrap_or(1);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let mut moves = Vec::new();
    let mut secs = 0.0;
    for _ in 0..std::env::var("F").ok().and_then(|t| t.parse().ok()).unwrap_or(300) {
        crowd.steer();
        let t = std::time::Instant::now();
        pool.install(|| walls.move_and_slide_many_into(&crowd.agents, &opts, &mut moves));
        secs += t.elapsed().as_secs_f64();
        crowd.apply(&moves);
    }
    eprintln!(
        "{threads} threads{}: {:.1} ns/step",
        if std::env::var_os("NOSORT").is_some() { " nosort" } else { "" },
        secs * 1e9 / 3e6
    );
}
