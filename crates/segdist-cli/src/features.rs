//! A GeoJSON FeatureCollection streamed feature by feature, fast: a scan of
//! the bytes finds where each feature ends (brackets outside strings), and
//! serde_json parses the feature from that slice (straight into geojson's
//! types for the common shapes, `feature_fast.rs`).
//!
//! Why not `geojson::FeatureReader`: it hands serde_json an `io::Read`,
//! which serde_json reads one byte at a time through `io::Bytes` (about 90
//! instructions a byte: a fifth of `segdist match`'s start on a 4 MB road
//! file, seconds on a 100 MB one). Reading the whole file and parsing it
//! at once would be as fast but not streamed; here memory holds one read
//! block (1 MiB) and the feature being parsed. An error names the feature
//! and where it is in the file (line and column), which the stream's
//! positions, counted from each feature's start, did not.

use std::io::Read;

use anyhow::{anyhow, Result};

/// How much is read at a time.
const BLOCK: usize = 1 << 20;

/// What a byte is to the scan outside strings.
const OTHER: u8 = 0;
const QUOTE: u8 = 1;
const OPEN: u8 = 2;
const CLOSE: u8 = 3;
/// A comma or white space.
const SEPARATOR: u8 = 4;

const CLASS: [u8; 256] = {
    let mut c = [OTHER; 256];
    c[b'"' as usize] = QUOTE;
    (c[b'{' as usize], c[b'[' as usize]) = (OPEN, OPEN);
    (c[b'}' as usize], c[b']' as usize]) = (CLOSE, CLOSE);
    let mut k = 0;
    while k < 5 {
        c[b", \t\n\r"[k] as usize] = SEPARATOR;
        k += 1;
    }
    c
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the `features` array's `[`.
    Before,
    /// Inside it: a feature, `,` or `]` comes next.
    During,
    /// After its `]`, or after an error: nothing more.
    Done,
}

/// The features of a FeatureCollection read from `r`, in file order.
pub(crate) struct Features<R> {
    r: R,
    name: String,
    buf: Vec<u8>,
    /// The next byte not yet taken; `buf[..pos]` is dropped on the next read.
    pos: usize,
    eof: bool,
    /// Line and column (1-based, bytes) of `buf[pos]` in the file.
    line: usize,
    column: usize,
    state: State,
    /// The next feature's number.
    index: usize,
}

impl<R: Read> Features<R> {
    /// `name` is the file's, for errors.
    pub(crate) fn new(name: &str, r: R) -> Self {
        let (buf, name) = (Vec::with_capacity(BLOCK), name.to_string());
        Features { r, name, buf, pos: 0, eof: false, line: 1, column: 1, state: State::Before, index: 0 }
    }

    /// Reads another block; `false` at the end of the file.
    fn more(&mut self) -> Result<bool> {
        if self.eof {
            return Ok(false);
        }
        self.buf.drain(..self.pos);
        self.pos = 0;
        let at = self.buf.len();
        self.buf.resize(at + BLOCK, 0);
        let n = loop {
            match self.r.read(&mut self.buf[at..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(anyhow!("cannot read {}: {e}", self.name)),
            }
        };
        self.buf.truncate(at + n);
        self.eof = n == 0;
        Ok(n > 0)
    }

    /// Takes `n` bytes, keeping the line and column.
    fn take(&mut self, n: usize) {
        let taken = &self.buf[self.pos..self.pos + n];
        match memchr::memrchr(b'\n', taken) {
            Some(last) => {
                self.line += memchr::memchr_iter(b'\n', taken).count();
                self.column = n - last;
            }
            None => self.column += n,
        }
        self.pos += n;
    }

    /// The next byte that is not white space, not taken; `None` at the end.
    fn peek(&mut self) -> Result<Option<u8>> {
        loop {
            while self.pos < self.buf.len() {
                let b = self.buf[self.pos];
                if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                    return Ok(Some(b));
                }
                self.take(1);
            }
            if !self.more()? {
                return Ok(None);
            }
        }
    }

    /// The length of the JSON value starting at `pos`, reading more as
    /// needed; `None` when the file ends inside it.
    fn value_len(&mut self) -> Result<Option<usize>> {
        let mut i = 0; // bytes of the value scanned so far
        let (mut depth, mut in_string) = (0usize, false);
        let first = self.buf[self.pos];
        loop {
            let bytes = &self.buf[self.pos..];
            while i < bytes.len() {
                let b = bytes[i];
                if in_string {
                    // Up to the next quote or backslash.
                    match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                        None => i = bytes.len(),
                        Some(j) if bytes[i + j] == b'"' => {
                            (i, in_string) = (i + j + 1, false);
                            if depth == 0 {
                                return Ok(Some(i)); // a string value
                            }
                        }
                        // A backslash and the byte it escapes.
                        Some(j) if i + j + 1 < bytes.len() => i += j + 2,
                        Some(_) => break, // read more, then look again
                    }
                    continue;
                }
                // Numbers and names: skipped in a tight loop.
                if CLASS[usize::from(b)] == OTHER {
                    i += 1;
                    while i < bytes.len() && CLASS[usize::from(bytes[i])] == OTHER {
                        i += 1;
                    }
                    continue;
                }
                match CLASS[usize::from(b)] {
                    OTHER => {}
                    QUOTE => in_string = true,
                    OPEN => depth += 1,
                    CLOSE if depth > 0 => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(Some(i + 1));
                        }
                    }
                    // A number, `true`, `false` or `null` ends at the first
                    // byte that cannot be in it (a close, a comma, a space).
                    _ if depth == 0 && i > 0 => return Ok(Some(i)),
                    _ => {}
                }
                i += 1;
            }
            if !self.more()? {
                let scalar = !matches!(first, b'{' | b'[' | b'"');
                let len = self.buf.len() - self.pos;
                return Ok((scalar && len > 0).then_some(len));
            }
        }
    }

    /// An error at the current position.
    fn error(&mut self, what: &str) -> anyhow::Error {
        self.state = State::Done;
        anyhow!("{}: line {}, column {}: {what}", self.name, self.line, self.column)
    }

    /// Moves to the `features` array's first element.
    fn find_features(&mut self) -> Result<()> {
        if self.peek()? != Some(b'{') {
            return Err(self.error("not a GeoJSON object"));
        }
        self.take(1);
        loop {
            match self.peek()? {
                Some(b'"') => {}
                _ => return Err(self.error("a FeatureCollection without a \"features\" array")),
            }
            let Some(n) = self.value_len()? else { return Err(self.error("the file ends inside a key")) };
            let key = self.buf[self.pos..self.pos + n] == *b"\"features\"";
            self.take(n);
            if self.peek()? != Some(b':') {
                return Err(self.error("expected ':'"));
            }
            self.take(1);
            if key {
                if self.peek()? != Some(b'[') {
                    return Err(self.error("\"features\" is not an array"));
                }
                self.take(1);
                self.state = State::During;
                return Ok(());
            }
            // Another member (type, crs, bbox, ...): skipped.
            if self.peek()?.is_none() {
                return Err(self.error("the file ends before \"features\""));
            }
            let Some(n) = self.value_len()? else { return Err(self.error("the file ends before \"features\"")) };
            self.take(n);
            if self.peek()? == Some(b',') {
                self.take(1);
            }
        }
    }

    fn next_feature(&mut self) -> Result<Option<geojson::Feature>> {
        if self.state == State::Before {
            self.find_features()?;
        }
        if self.state == State::Done {
            return Ok(None);
        }
        let i = self.index;
        match self.peek()? {
            Some(b']') => {
                self.state = State::Done;
                return Ok(None);
            }
            Some(b',') if i > 0 => {
                self.take(1);
                if self.peek()? == Some(b']') {
                    return Err(self.error("a ',' before ']'"));
                }
            }
            Some(_) if i == 0 => {}
            Some(_) => return Err(self.error(&format!("expected ',' or ']' after feature {}", i - 1))),
            None => return Err(self.error("the file ends inside the \"features\" array")),
        }
        if self.peek()?.is_none() {
            return Err(self.error("the file ends inside the \"features\" array"));
        }
        let (line, column) = (self.line, self.column);
        let Some(n) = self.value_len()? else {
            return Err(self.error(&format!("feature {i}: the file ends inside it")));
        };
        let text = &self.buf[self.pos..self.pos + n];
        // The common shapes by the fast path; the rest (and errors) by
        // geojson's own reading.
        let parsed = match crate::feature_fast::parse(text) {
            Some(f) => Ok(f),
            None => serde_json::from_slice::<geojson::Feature>(text),
        };
        self.index += 1;
        match parsed {
            Ok(f) => {
                self.take(n);
                Ok(Some(f))
            }
            Err(e) => {
                self.state = State::Done;
                // serde_json's position is from the feature's start.
                let (l, c) = (e.line(), e.column());
                let (line, column) = if l <= 1 { (line, column + c.saturating_sub(1)) } else { (line + l - 1, c) };
                let text = e.to_string();
                let text = text.split(" at line ").next().unwrap_or(&text);
                Err(anyhow!("{}: feature {i} (line {line}, column {column}): {text}", self.name))
            }
        }
    }
}

impl<R: Read> Iterator for Features<R> {
    type Item = Result<geojson::Feature>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_feature().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read in blocks of `n` bytes, so features straddle reads.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(self.1).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn all(text: &str, block: usize) -> Result<Vec<geojson::Feature>> {
        Features::new("f.geojson", Trickle(text.as_bytes(), block)).collect()
    }

    const FC: &str = r#"{"type": "FeatureCollection", "name": "a \"quoted\" ] name", "bbox": [0, 0, 1, 1],
"crs": {"type": "name", "properties": {"name": "urn:ogc:def:crs:OGC:1.3:CRS84"}},
"features": [
{"type": "Feature", "id": 7, "properties": {"n": "}]\\", "k": [1, {"x": null}]}, "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 2.5]]}},
{"type": "Feature", "properties": null, "geometry": {"type": "Point", "coordinates": [3, 4]}}
]}"#;

    #[test]
    fn features_are_those_geojson_reads_whatever_the_blocks() {
        let want = match FC.parse::<geojson::GeoJson>().expect("valid") {
            geojson::GeoJson::FeatureCollection(fc) => fc.features,
            _ => unreachable!(),
        };
        for block in [1, 2, 3, 7, 64, 1 << 20] {
            assert_eq!(all(FC, block).expect("valid"), want, "blocks of {block}");
        }
        let empty = r#"{"type":"FeatureCollection","features":[ ]}"#;
        assert!(all(empty, 5).expect("valid").is_empty());
    }

    #[test]
    fn a_broken_feature_is_named_with_its_line_and_column() {
        let bad = FC.replace("[3, 4]", "[3, oops]");
        let e = all(&bad, 4).unwrap_err().to_string();
        assert!(e.starts_with("f.geojson: feature 1 (line 5, column 90): expected value"), "{e}");
        let bad = FC.replace("\"Point\"", "\"Pointy\"");
        let e = all(&bad, 1 << 20).unwrap_err().to_string();
        assert!(e.starts_with("f.geojson: feature 1 (line 5, column "), "{e}");
    }

    #[test]
    fn a_cut_or_malformed_collection_is_an_error_not_a_panic() {
        for (text, want) in [
            (&FC[..FC.len() - 3], "the file ends inside the \"features\" array"),
            (&FC[..FC.len() - 10], "feature 1: the file ends inside it"),
            (r#"{"type":"FeatureCollection"}"#, "without a \"features\" array"),
            (r#"{"type":"FeatureCollection","features":{}}"#, "\"features\" is not an array"),
            (
                r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":null},]}"#,
                "a ',' before ']'",
            ),
            (
                r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":null} {}]}"#,
                "expected ',' or ']' after feature 0",
            ),
            (r#"["FeatureCollection"]"#, "not a GeoJSON object"),
            (r#"{"type":"FeatureCollection""#, "without a \"features\" array"),
            (r#"{"type" "FeatureCollection"}"#, "line 1, column 9: expected ':'"),
            ("", "not a GeoJSON object"),
        ] {
            for block in [1, 3, 1 << 20] {
                let e = all(text, block).unwrap_err().to_string();
                assert!(e.contains(want), "{text:?}: {e}");
            }
        }
    }

    #[test]
    fn nothing_follows_an_error() {
        let bad = FC.replace("[3, 4]", "[3, oops]");
        let mut it = Features::new("f.geojson", Trickle(bad.as_bytes(), 1 << 20));
        assert!(it.next().expect("one").is_ok());
        assert!(it.next().expect("two").is_err());
        assert!(it.next().is_none());
    }
}
