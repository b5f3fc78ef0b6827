//! A lon/lat point prepared once for the several queries made of it: its
//! Earth-centred coordinates (two sines and two cosines) are what the grid's
//! cell, its nearest segments and a distance to another point all start
//! from. A map matcher asks all three of every fix.

use crate::short::{arc, SHORT};
use crate::vec3::{norm, sub};
use crate::{ecef, geodesic, valid};

/// A `[lon, lat]` point and its Earth-centred coordinates, for
/// [`GeoGrid::cell_of`](crate::GeoGrid::cell_of),
/// [`GeoGrid::k_nearest_within_of`](crate::GeoGrid::k_nearest_within_of)
/// and [`distance`](Self::distance): the same answers, bit for bit, as
/// those given the point's coordinates, for one conversion instead of one
/// each.
///
/// ```
/// use segdist_geo::GeoPoint;
/// let (a, b) = ([24.9432708, 60.1665138], [24.9456678, 60.1676677]);
/// let (pa, pb) = (GeoPoint::new(a).unwrap(), GeoPoint::new(b).unwrap());
/// assert_eq!(pa.lonlat(), a);
/// assert_eq!(pa.distance(&pb), segdist_geo::geodesic(a, a, b).unwrap().distance);
/// assert!(GeoPoint::new([0.0, 91.0]).is_none()); // not lon/lat
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeoPoint {
    p: [f64; 2],
    x: [f64; 3],
}

impl GeoPoint {
    /// `p` prepared; `None` for a point that is not lon/lat (not finite,
    /// or a latitude outside [-90, 90]).
    ///
    /// ```
    /// assert!(segdist_geo::GeoPoint::new([24.94, 60.17]).is_some());
    /// assert!(segdist_geo::GeoPoint::new([f64::NAN, 60.17]).is_none());
    /// ```
    #[must_use]
    pub fn new(p: [f64; 2]) -> Option<GeoPoint> {
        valid(&p).then(|| GeoPoint { p, x: ecef(&p) })
    }

    /// The point's `[lon, lat]`, as given.
    ///
    /// ```
    /// assert_eq!(segdist_geo::GeoPoint::new([190.0, 1.0]).unwrap().lonlat(), [190.0, 1.0]);
    /// ```
    #[must_use]
    pub fn lonlat(&self) -> [f64; 2] {
        self.p
    }

    /// Its Earth-centred coordinates (metres).
    pub(crate) fn ecef(&self) -> &[f64; 3] {
        &self.x
    }

    /// The geodesic distance (m) to `to`: [`geodesic`]`(a, a, b)`'s, bit
    /// for bit (its short path, the chord turned into an arc, for points up
    /// to 2 km apart whose longitudes are in [-180, 180]; GeographicLib
    /// otherwise).
    ///
    /// ```
    /// use segdist_geo::GeoPoint;
    /// let (a, b) = ([0.0, 0.0], [0.0, 0.001]);
    /// let d = GeoPoint::new(a).unwrap().distance(&GeoPoint::new(b).unwrap());
    /// assert!((d - 110.574).abs() < 0.001); // 0.001° of latitude at the equator
    /// ```
    #[must_use]
    pub fn distance(&self, to: &GeoPoint) -> f64 {
        let plain = |p: &[f64; 2]| (-180.0..=180.0).contains(&p[0]);
        if plain(&self.p) && plain(&to.p) {
            // What the short path does for the segment `a → a`: the foot
            // is `a` itself.
            let d = norm(&sub(&to.x, &self.x));
            if d <= SHORT {
                return arc(d);
            }
        }
        geodesic(self.p, self.p, to.p).map_or(0.0, |r| r.distance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distance between prepared points is `geodesic(a, a, b)`'s, bit
    /// for bit: near and far (past the short path's 2 km), across the
    /// antimeridian, with longitudes outside [-180, 180], at the poles.
    #[test]
    fn prepared_distances_are_the_geodesic_s_bit_for_bit() {
        let mut n = 0;
        for i in 0..4000u32 {
            let f = |k: f64| (f64::from(i) * k) % 1.0;
            let a = [f(0.618_033_988_7) * 400.0 - 200.0, f(0.414_213_562_3) * 180.0 - 90.0];
            // From metres to a few kilometres away.
            let r = [1e-5, 1e-3, 0.01, 0.05][i as usize % 4];
            let b = [a[0] + (f(0.732_050_807_5) - 0.5) * r, (a[1] + (f(0.236_067_977_5) - 0.5) * r).clamp(-90.0, 90.0)];
            let (pa, pb) = (GeoPoint::new(a).unwrap(), GeoPoint::new(b).unwrap());
            let want = geodesic(a, a, b).unwrap().distance;
            assert_eq!(pa.distance(&pb).to_bits(), want.to_bits(), "{a:?} {b:?}");
            n += usize::from(want > SHORT);
        }
        assert!(n > 100, "{n} past the short path");
        for (a, b) in [([0.0, 90.0], [180.0, 90.0]), ([179.9999, 1.0], [-179.9999, 1.0]), ([10.0, 5.0], [10.0, 5.0])] {
            let want = geodesic(a, a, b).unwrap().distance;
            assert_eq!(GeoPoint::new(a).unwrap().distance(&GeoPoint::new(b).unwrap()).to_bits(), want.to_bits());
        }
    }
}
