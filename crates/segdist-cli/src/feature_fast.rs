//! A GeoJSON feature parsed straight into `geojson::Feature`, for the
//! common shapes: a `Feature` with `id`, `properties` and a Point,
//! MultiPoint, LineString, MultiLineString, Polygon or MultiPolygon
//! geometry, and nothing else.
//!
//! Why: `geojson::Feature`'s own deserializer reads the feature into a
//! `serde_json::Map`, then its geometry into another, its coordinates into
//! `serde_json::Value` arrays, and converts them: about 19,000 instructions
//! a feature of three vertices (the start of `segdist match` on a city's
//! 18,552 roads: 360 M instructions, most of reading them). Here the
//! coordinates go straight into the `Vec<f64>` positions geojson keeps.
//!
//! Anything else (a `bbox`, foreign members, a GeometryCollection, a
//! missing geometry, a malformed value) is not taken: [`parse`] says
//! `None` and the caller asks geojson, whose answer or error then stands.
//! So a file reads the same either way (`tests`: the same features as
//! geojson's for test files and every feature of the bundled data).

use geojson::{feature::Id, Feature, Geometry, JsonObject, Position, Value};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

/// `feature`'s text as a `geojson::Feature`, if it is of the common shape.
pub(crate) fn parse(feature: &[u8]) -> Option<Feature> {
    let f: Fast = serde_json::from_slice(feature).ok()?;
    let geometry = match f.geometry.0 {
        None => None,
        Some(g) => Some(Geometry::new(value(g.kind, g.coordinates)?)),
    };
    let id = match f.id {
        None => None,
        Some(serde_json::Value::String(s)) => Some(Id::String(s)),
        Some(serde_json::Value::Number(n)) => Some(Id::Number(n)),
        Some(_) => return None,
    };
    Some(Feature { bbox: None, geometry, id, properties: f.properties, foreign_members: None })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fast {
    #[serde(rename = "type")]
    _kind: FeatureTag,
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    properties: Option<JsonObject>,
    /// Required (geojson's rule), null allowed.
    geometry: Nullable<FastGeometry>,
}

#[derive(Deserialize)]
enum FeatureTag {
    Feature,
}

/// An object that must be there, or `null` (serde takes a missing
/// `Option` field for `None`; geojson wants a feature's geometry).
struct Nullable<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Nullable<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Nullable<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object or null")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Nullable(None))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Nullable(Some(t)))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FastGeometry {
    #[serde(rename = "type")]
    kind: GeometryTag,
    coordinates: Coords,
}

#[derive(Clone, Copy, Deserialize)]
enum GeometryTag {
    Point,
    MultiPoint,
    LineString,
    MultiLineString,
    Polygon,
    MultiPolygon,
}

/// Nested coordinate arrays: a position (numbers), or a list of lists.
enum Coords {
    Position(Position),
    List(Vec<Coords>),
}

impl<'de> Deserialize<'de> for Coords {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(CoordsVisitor)
    }
}

struct CoordsVisitor;

/// One element of a coordinate array: a number or a nested array.
enum Element {
    Number(f64),
    Array(Coords),
}

impl<'de> Deserialize<'de> for Element {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Element;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number or an array")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Element, E> {
                Ok(Element::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Element, E> {
                Ok(Element::Number(v as f64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Element, E> {
                Ok(Element::Number(v as f64))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Element, A::Error> {
                CoordsVisitor.visit_seq(seq).map(Element::Array)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Visitor<'de> for CoordsVisitor {
    type Value = Coords;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("coordinates")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Coords, A::Error> {
        let Some(first) = seq.next_element::<Element>()? else { return Ok(Coords::List(Vec::new())) };
        match first {
            Element::Number(x) => {
                let mut p = Vec::with_capacity(2);
                p.push(x);
                while let Some(v) = seq.next_element::<f64>()? {
                    p.push(v);
                }
                Ok(Coords::Position(p))
            }
            Element::Array(c) => {
                let mut list = vec![c];
                while let Some(c) = seq.next_element::<Coords>()? {
                    list.push(c);
                }
                Ok(Coords::List(list))
            }
        }
    }
}

/// The geometry's value, if the coordinates nest as its type says (and
/// every position has two numbers or more).
fn value(kind: GeometryTag, c: Coords) -> Option<Value> {
    fn position(c: Coords) -> Option<Position> {
        match c {
            Coords::Position(p) if p.len() >= 2 => Some(p),
            _ => None,
        }
    }
    fn list<T>(c: Coords, each: impl Fn(Coords) -> Option<T>) -> Option<Vec<T>> {
        match c {
            Coords::List(v) => v.into_iter().map(each).collect(),
            Coords::Position(_) => None,
        }
    }
    let line = |c| list(c, position);
    let lines = |c| list(c, line);
    Some(match kind {
        GeometryTag::Point => Value::Point(position(c)?),
        GeometryTag::MultiPoint => Value::MultiPoint(line(c)?),
        GeometryTag::LineString => Value::LineString(line(c)?),
        GeometryTag::MultiLineString => Value::MultiLineString(lines(c)?),
        GeometryTag::Polygon => Value::Polygon(lines(c)?),
        GeometryTag::MultiPolygon => Value::MultiPolygon(list(c, lines)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// geojson's own reading of one feature's text.
    fn geojson(text: &str) -> Option<Feature> {
        serde_json::from_str::<Feature>(text).ok()
    }

    #[test]
    fn the_common_shapes_read_as_geojson_reads_them() {
        for text in [
            r#"{"type":"Feature","id":7,"properties":{"n":"}]","k":[1,{"x":null}]},"geometry":{"type":"LineString","coordinates":[[0,0],[1,2.5]]}}"#,
            r#"{"type":"Feature","properties":null,"geometry":{"type":"Point","coordinates":[3,4]}}"#,
            r#"{"type":"Feature","id":"a","geometry":null,"properties":{}}"#,
            r#"{"geometry":{"coordinates":[[1,2,3],[4e-3,-5.5]],"type":"MultiPoint"},"type":"Feature"}"#,
            r#"{"type":"Feature","geometry":{"type":"MultiLineString","coordinates":[[[0,0],[1,1]],[]]},"properties":null}"#,
            r#"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,1],[0,0]]]},"properties":null}"#,
            r#"{"type":"Feature","geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[0,1],[0,0]]]]},"properties":null}"#,
            r#"{"type":"Feature","geometry":{"type":"LineString","coordinates":[[-0,1e308],[18446744073709551616,-9007199254740993]]},"properties":null}"#,
        ] {
            let fast = parse(text.as_bytes());
            assert!(fast.is_some(), "{text}");
            assert_eq!(fast, geojson(text), "{text}");
        }
    }

    #[test]
    fn anything_else_is_left_to_geojson() {
        for text in [
            r#"{"type":"Feature","bbox":[0,0,1,1],"geometry":null,"properties":null}"#,
            r#"{"type":"Feature","geometry":null,"properties":null,"extra":1}"#,
            r#"{"type":"Feature","properties":null}"#,
            r#"{"type":"Feat","geometry":null,"properties":null}"#,
            r#"{"type":"Feature","geometry":{"type":"GeometryCollection","geometries":[]},"properties":null}"#,
            r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[[0,0]]},"properties":null}"#,
            r#"{"type":"Feature","geometry":{"type":"LineString","coordinates":[0,0]},"properties":null}"#,
            r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[0]},"properties":null}"#,
            r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[0,"1"]},"properties":null}"#,
            r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[0,1],"bbox":[0,1,0,1]},"properties":null}"#,
            r#"{"type":"Feature","id":[1],"geometry":null,"properties":null}"#,
            r#"{"type":"Feature","geometry":null,"properties":null"#,
        ] {
            assert!(parse(text.as_bytes()).is_none(), "{text}: {:?}", geojson(text));
        }
    }

    #[test]
    fn the_bundled_data_reads_the_same() {
        // Every GeoJSON file of the bundled data (absent from a checkout
        // without ../shared beside it), read by the streaming reader with
        // this path, against geojson's reading of the whole file.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/helsinki");
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut seen = 0;
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_none_or(|x| x != "geojson") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let Ok(geojson::GeoJson::FeatureCollection(fc)) = text.parse::<geojson::GeoJson>() else { continue };
            let streamed: Vec<Feature> =
                crate::features::Features::new("f", text.as_bytes()).collect::<anyhow::Result<_>>().unwrap();
            assert!(streamed == fc.features, "{}", path.display());
            assert!(fc.features.iter().all(|f| parse(serde_json::to_string(f).unwrap().as_bytes()).is_some()));
            seen += streamed.len();
        }
        assert!(seen > 1000, "{seen}");
    }
}
