//! Where results go: stdout, or a named file written all-or-nothing.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

/// An output sink. A named file is written to a temporary file beside it and
/// renamed into place only by [`Output::finish`]; dropped unfinished (on any
/// error), the temporary file is removed, so no half-written output is left.
pub enum Output {
    Stdout(BufWriter<io::Stdout>),
    File { tmp: PathBuf, dest: PathBuf, w: Option<BufWriter<File>> },
}

impl Output {
    pub fn open(dest: Option<&Path>) -> Result<Output> {
        let Some(dest) = dest else {
            return Ok(Output::Stdout(BufWriter::with_capacity(1 << 16, io::stdout())));
        };
        let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = dest.with_file_name(format!(".{name}.segdist-{}.tmp", std::process::id()));
        let f = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        Ok(Output::File { tmp, dest: dest.to_path_buf(), w: Some(BufWriter::with_capacity(1 << 16, f)) })
    }

    pub fn finish(mut self) -> Result<()> {
        match &mut self {
            Output::Stdout(w) => w.flush()?,
            Output::File { tmp, dest, w } => {
                let f = w.take().expect("finished once").into_inner().map_err(|e| e.into_error())?;
                f.sync_all()?;
                drop(f);
                std::fs::rename(&*tmp, &*dest).with_context(|| format!("cannot write {}", dest.display()))?;
            }
        }
        Ok(())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(w) => w.write(buf),
            Output::File { w, .. } => w.as_mut().expect("not finished").write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout(w) => w.write_all(buf),
            Output::File { w, .. } => w.as_mut().expect("not finished").write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(w) => w.flush(),
            Output::File { w, .. } => w.as_mut().map_or(Ok(()), |w| w.flush()),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Output::File { tmp, w: Some(_), .. } = self {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// A progress bar on stderr for inputs over 8 MiB when stderr is a terminal
/// (bytes, rate, ETA); hidden otherwise or with `--quiet`.
pub fn progress_bar(quiet: bool, len: Option<u64>) -> ProgressBar {
    match len {
        Some(len) if !quiet && std::io::stderr().is_terminal() && len > (8 << 20) => {
            let pb = ProgressBar::new(len);
            pb.set_style(
                ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}")
                    .expect("valid template"),
            );
            pb
        }
        _ => ProgressBar::hidden(),
    }
}
