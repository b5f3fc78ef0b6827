//! glam and mint vectors in, the same vectors out, with the features on
//! (`cargo test -p segdist-collide --features glam,mint`).

#![cfg(all(feature = "glam", feature = "mint"))]

use segdist_collide::{Agent, MoveOptions, WallSet};

fn room() -> WallSet {
    let mut b = WallSet::builder();
    b.push_polygon(&[
        glam::Vec2::new(0.0, 0.0),
        glam::Vec2::new(10.0, 0.0),
        glam::Vec2::new(10.0, 10.0),
        glam::Vec2::new(0.0, 10.0),
    ]);
    b.build().unwrap()
}

#[test]
fn glam_vec2_in_and_out() {
    let walls = room();
    let m = walls.move_and_slide(glam::Vec2::new(5.0, 5.0), 0.5, glam::Vec2::new(20.0, 0.0), &MoveOptions::default());
    let p: glam::Vec2 = m.position;
    assert!(p.x <= 9.5 && p.x > 9.4 && p.y == 5.0);
    // The same answer as with arrays, bit for bit.
    let a = walls.move_and_slide([5.0f32, 5.0], 0.5, [20.0, 0.0], &MoveOptions::default());
    assert_eq!(p.to_array(), a.position);
    let hit = walls.cast(glam::DVec2::new(5.0, 5.0), 1.0, glam::DVec2::new(0.0, -10.0)).unwrap();
    assert_eq!(hit.normal, glam::DVec2::new(0.0, 1.0));
    let agents = [Agent { position: glam::Vec2::new(1.0, 1.0), radius: 0.5, motion: glam::Vec2::new(-3.0, 0.0) }];
    assert!(walls.move_and_slide_many(&agents, &MoveOptions::default())[0].position.x >= 0.5);
}

#[test]
fn mint_vectors_in_and_out() {
    let walls = room();
    let c = walls.overlap(mint::Point2 { x: 0.25f64, y: 5.0 }, 0.5);
    assert_eq!(c[0].normal, mint::Point2 { x: 1.0, y: 0.0 });
    let r = walls.resolve(mint::Vector2 { x: 0.25f32, y: 5.0 }, 0.5);
    assert!(r.converged && r.position.x >= 0.5);
}
