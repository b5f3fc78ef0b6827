//! Networks shared by the index and grid tests.

/// Lines of `[lon, lat]` vertices, one feature each.
pub type Lines = Vec<Vec<[f64; 2]>>;

/// Twelve roads of about 100 m from one junction `c`: at the junction all
/// are at distance 0 (ties by lowest id).
pub fn star(c: [f64; 2]) -> Lines {
    (0..12)
        .map(|i| {
            let a = f64::from(i) * std::f64::consts::TAU / 12.0;
            vec![c, [c[0] + 0.001 * a.cos(), c[1] + 0.0005 * a.sin()]]
        })
        .collect()
}
