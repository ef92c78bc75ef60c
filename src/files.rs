//! Output files written safely: never over one of the command's inputs, atomically (a temporary file renamed into
//! place, so a crash never leaves half a file), and a failed write is an error, never a silent success.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Why an output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("output {output} is the {role} given as input; refusing to overwrite it (choose another output path)")]
    OverwritesInput { output: PathBuf, role: String },
    #[error("output {output} is given twice ({first} and {second})")]
    SameOutputTwice { output: PathBuf, first: String, second: String },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

/// One file a command reads or writes, with the role it plays (for messages: "camera file", "--annotate").
#[derive(Debug, Clone, Copy)]
pub struct Role<'a> {
    pub path: &'a Path,
    pub role: &'a str,
}

impl<'a> Role<'a> {
    pub fn new(path: &'a Path, role: &'a str) -> Self {
        Role { path, role }
    }
}

/// Fails when any output is one of the inputs (the same file by path, through a symbolic link, or as a hard link), or
/// when two outputs are the same file. Outputs that do not exist yet are compared by their resolved directory and name.
pub fn check_outputs(inputs: &[Role<'_>], outputs: &[Role<'_>]) -> Result<(), OutputError> {
    for (i, out) in outputs.iter().enumerate() {
        for input in inputs {
            if same_file(out.path, input.path) {
                return Err(OutputError::OverwritesInput { output: out.path.to_path_buf(), role: input.role.to_string() });
            }
        }
        for other in &outputs[..i] {
            if same_file(out.path, other.path) {
                return Err(OutputError::SameOutputTwice {
                    output: out.path.to_path_buf(),
                    first: other.role.to_string(),
                    second: out.role.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Whether two paths name the same file: the same device and inode when both exist, else the same resolved path.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    match (resolved(a), resolved(b)) {
        (Some(ra), Some(rb)) => ra == rb,
        _ => a == b,
    }
}

/// The canonical form of a path whose file may not exist yet: its canonical directory joined with its name.
fn resolved(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Some(c);
    }
    let name = p.file_name()?;
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.canonicalize().ok()?,
        _ => std::env::current_dir().ok()?,
    };
    Some(dir.join(name))
}

/// Writes `bytes` to `path` atomically: to a temporary file in the same directory, flushed and synced, then renamed
/// over `path`. An existing non-regular file (a device such as `/dev/stdout`, a pipe) is written in place, since it
/// cannot be replaced; a failed write there (`/dev/full`) is an error too.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write_with(path, |target| {
        let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(true).open(target)?;
        f.write_all(bytes)?;
        f.flush()?;
        // A device (`/dev/full`, a terminal) cannot be synced; only a regular file is.
        if f.metadata()?.is_file() {
            f.sync_all()?;
        }
        Ok(())
    })
}

/// Writes `path` atomically with a writer that takes a path (OpenCV's `imwrite`, `FileStorage`): `write` writes a
/// temporary file in the same directory whose name ends as `path`'s does (the same extension, so format-by-extension
/// writers choose the same format), which is then renamed over `path`. An existing non-regular file is written in
/// place. A writer that reports success but leaves no file is an error.
pub fn write_with(path: &Path, write: impl FnOnce(&Path) -> std::io::Result<()>) -> Result<(), OutputError> {
    let fail = |source: std::io::Error| OutputError::Write { path: path.to_path_buf(), source };
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Err(fail(std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory")));
        }
        if !meta.is_file() {
            // A device or pipe: the writer writes a temporary file (path-taking writers such as OpenCV's do not report
            // a failed write), whose bytes are then written to the device with every error reported.
            let tmp = std::env::temp_dir().join(format!(".boardcall-{}-{}", std::process::id(), path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()));
            let bytes = write(&tmp).and_then(|()| std::fs::read(&tmp));
            let _ = std::fs::remove_file(&tmp);
            let bytes = bytes.map_err(fail)?;
            let mut f = std::fs::OpenOptions::new().write(true).open(path).map_err(fail)?;
            f.write_all(&bytes).map_err(fail)?;
            return f.flush().map_err(fail);
        }
    }
    let name = path.file_name().ok_or_else(|| fail(std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name")))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tmp = dir.join(format!(".boardcall-{}-{}", std::process::id(), name.to_string_lossy()));
    let result = write(&tmp).and_then(|()| {
        if !tmp.is_file() {
            return Err(std::io::Error::other("the writer reported success but wrote no file"));
        }
        std::fs::rename(&tmp, path)
    });
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("boardcall-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_by_path_link_or_relative_name() {
        let dir = scratch("same");
        let input = dir.join("frame.jpg");
        std::fs::write(&input, b"x").unwrap();
        let inputs = [Role::new(&input, "image")];
        let same = dir.join(".").join("frame.jpg");
        assert!(matches!(check_outputs(&inputs, &[Role::new(&same, "--annotate")]), Err(OutputError::OverwritesInput { .. })));
        let hard = dir.join("hard.jpg");
        std::fs::hard_link(&input, &hard).unwrap();
        assert!(check_outputs(&inputs, &[Role::new(&hard, "--annotate")]).is_err(), "a hard link is the same file");
        #[cfg(unix)]
        {
            let soft = dir.join("soft.jpg");
            std::os::unix::fs::symlink(&input, &soft).unwrap();
            assert!(check_outputs(&inputs, &[Role::new(&soft, "--annotate")]).is_err(), "a symlink names the same file");
        }
        let other = dir.join("out.png");
        assert!(check_outputs(&inputs, &[Role::new(&other, "--annotate")]).is_ok());
        let twice = [Role::new(&other, "-o"), Role::new(&other, "--overlay")];
        assert!(matches!(check_outputs(&inputs, &twice), Err(OutputError::SameOutputTwice { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn atomic_write_replaces_whole_files_and_leaves_no_temporary() {
        let dir = scratch("atomic");
        let p = dir.join("out.json");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 1, "only the output remains: {left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_is_an_error() {
        let dir = scratch("fail");
        assert!(write_atomic(&dir.join("no-such-dir").join("out.png"), b"x").is_err());
        assert!(write_atomic(&dir, b"x").is_err(), "a directory is not a file");
        if Path::new("/dev/full").exists() {
            assert!(write_atomic(Path::new("/dev/full"), b"x").is_err(), "a full device reports the failure");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
