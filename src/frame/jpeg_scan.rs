//! Walks a sequential (baseline or extended) JPEG's entropy-coded data code by code, without decoding any pixel, and
//! checks that it is whole: every Huffman code valid, no block past its 64 coefficients, the restart markers in
//! order, and the data ending exactly where its last block does. This is what libjpeg warns about on stderr ("corrupt
//! JPEG data: N extraneous bytes", "premature end of data segment") while still returning a picture: a stream damaged
//! by a flipped, lost or repeated run of bytes decodes to a plausible picture of the wrong pixels (everything after
//! the damage shifted), which no check of the picture can tell from a real one.
//!
//! Progressive and arithmetic-coded files are not walked (the strict decode still checks them).

/// Why a scan is not whole.
pub type ScanError = String;

/// A Huffman table in the canonical form of the JPEG standard (Annex C / F.2.2.3).
#[derive(Clone)]
struct Huffman {
    /// Largest code of each length 1..=16 (-1: none of that length).
    max_code: [i32; 17],
    /// Index into `symbols` of the first code of each length, minus that code.
    offset: [i32; 17],
    symbols: Vec<u8>,
}

impl Huffman {
    fn new(counts: &[u8; 16], symbols: &[u8]) -> Result<Huffman, ScanError> {
        let (mut max_code, mut offset) = ([-1i32; 17], [0i32; 17]);
        let (mut code, mut k) = (0i32, 0i32);
        for len in 1..=16 {
            let n = i32::from(counts[len - 1]);
            offset[len] = k - code;
            if n > 0 {
                code += n;
                max_code[len] = code - 1;
                k += n;
            }
            if code > (1 << len) {
                return Err("a Huffman table has more codes than its lengths allow".into());
            }
            code <<= 1;
        }
        if k as usize != symbols.len() {
            return Err("a Huffman table's symbol count does not match".into());
        }
        Ok(Huffman { max_code, offset, symbols: symbols.to_vec() })
    }
}

/// Reads the entropy-coded bits: `FF 00` is a stuffed `FF`; any other `FF xx` is a marker, where the data ends.
struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
    buf: u64,
    /// Bits in `buf`, of which the last `fake` are zeros fed past a marker (the data ended).
    count: u32,
    fake: u32,
}

impl<'a> Bits<'a> {
    fn fill(&mut self) {
        while self.count <= 56 {
            let b = self.data.get(self.pos).copied();
            let real = match b {
                Some(0xFF) if self.data.get(self.pos + 1) == Some(&0x00) => {
                    self.pos += 2;
                    true
                }
                Some(0xFF) | None => false,
                Some(_) => {
                    self.pos += 1;
                    true
                }
            };
            self.buf |= u64::from(if real { b.unwrap_or(0) } else { 0 }) << (56 - self.count);
            self.count += 8;
            if !real {
                self.fake += 8;
            }
        }
    }

    fn take(&mut self, n: u32) -> Result<u32, ScanError> {
        if n == 0 {
            return Ok(0);
        }
        if self.count < n {
            self.fill();
        }
        if n > self.count - self.fake {
            return Err("the entropy-coded data ends before its last block (data missing)".into());
        }
        let v = (self.buf >> (64 - n)) as u32;
        self.buf <<= n;
        self.count -= n;
        Ok(v)
    }

    fn decode(&mut self, h: &Huffman) -> Result<u8, ScanError> {
        let mut code = 0i32;
        for len in 1..=16 {
            code = (code << 1) | self.take(1)? as i32;
            if code <= h.max_code[len] {
                return h.symbols.get((code + h.offset[len]) as usize).copied().ok_or_else(|| "a Huffman code past its table".to_string());
            }
        }
        Err("an invalid Huffman code (the data is corrupt)".into())
    }

    /// Drops the padding bits to the byte boundary; fails if whole bytes of data are left before the marker.
    fn end_of_segment(&mut self) -> Result<(), ScanError> {
        self.fill();
        let real = self.count - self.fake;
        if real >= 8 {
            return Err(format!("{} extraneous bytes of data before a marker (the data is corrupt)", real / 8));
        }
        Ok(())
    }

    /// Moves past a restart marker, which must be `FF D0+n`.
    fn restart(&mut self, n: u8) -> Result<(), ScanError> {
        self.end_of_segment()?;
        if self.data.get(self.pos) != Some(&0xFF) || self.data.get(self.pos + 1) != Some(&(0xD0 + n)) {
            return Err("a restart marker is missing or out of order".into());
        }
        self.pos += 2;
        self.buf = 0;
        self.count = 0;
        self.fake = 0;
        Ok(())
    }
}

struct Component {
    id: u8,
    h: usize,
    v: usize,
}

/// Checks a JPEG's entropy-coded data; `Ok` also for the kinds of file it does not walk (progressive, arithmetic).
pub fn check(bytes: &[u8]) -> Result<(), ScanError> {
    let seg = |i: usize| -> Result<&[u8], ScanError> {
        let len = usize::from(u16::from_be_bytes([*bytes.get(i).ok_or("cut inside a header")?, *bytes.get(i + 1).ok_or("cut inside a header")?]));
        bytes.get(i + 2..i + len).filter(|_| len >= 2).ok_or_else(|| "a header segment runs past the file's end".to_string())
    };
    let (mut dc, mut ac): ([Option<Huffman>; 4], [Option<Huffman>; 4]) = Default::default();
    let (mut comps, mut size, mut interval) = (Vec::<Component>::new(), (0usize, 0usize), 0usize);
    let mut i = 2;
    while i + 2 <= bytes.len() {
        if bytes[i] != 0xFF {
            return Err(format!("bytes where a marker should be, at {i}"));
        }
        let marker = bytes[i + 1];
        i += 2;
        match marker {
            0xFF => i -= 1,
            0xD9 => return Ok(()),
            0xD0..=0xD7 | 0x01 => {}
            0xC2 | 0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF => return Ok(()),
            0xC0 | 0xC1 => {
                let s = seg(i)?;
                if s.len() < 6 {
                    return Err("a short frame header".into());
                }
                size = (usize::from(u16::from_be_bytes([s[3], s[4]])), usize::from(u16::from_be_bytes([s[1], s[2]])));
                comps = s[6..].chunks_exact(3).take(usize::from(s[5])).map(|c| Component { id: c[0], h: usize::from(c[1] >> 4), v: usize::from(c[1] & 15) }).collect();
                if comps.is_empty() || comps.iter().any(|c| !(1..=4).contains(&c.h) || !(1..=4).contains(&c.v)) || size.0 == 0 || size.1 == 0 {
                    return Err("an invalid frame header".into());
                }
                i += s.len() + 2;
            }
            0xC4 => {
                let s = seg(i)?;
                let mut j = 0;
                while j + 17 <= s.len() {
                    let (class, id) = (s[j] >> 4, usize::from(s[j] & 15));
                    let counts: [u8; 16] = s[j + 1..j + 17].try_into().expect("16 bytes");
                    let n: usize = counts.iter().map(|&c| usize::from(c)).sum();
                    let symbols = s.get(j + 17..j + 17 + n).ok_or("a Huffman table runs past its segment")?;
                    let table = Huffman::new(&counts, symbols)?;
                    match (class, id) {
                        (0, 0..=3) => dc[id] = Some(table),
                        (1, 0..=3) => ac[id] = Some(table),
                        _ => return Err("a Huffman table of an unknown class or slot".into()),
                    }
                    j += 17 + n;
                }
                i += s.len() + 2;
            }
            0xDD => {
                let s = seg(i)?;
                interval = usize::from(u16::from_be_bytes([*s.first().ok_or("short DRI")?, *s.get(1).ok_or("short DRI")?]));
                i += s.len() + 2;
            }
            0xDA => {
                let s = seg(i)?;
                i += s.len() + 2;
                i = walk_scan(bytes, i, s, &comps, size, interval, &dc, &ac)?;
            }
            _ => i += seg(i)?.len() + 2,
        }
    }
    Err("no end-of-image marker".into())
}

/// Walks one scan's data from `start`; returns where the marker after it begins.
#[allow(clippy::too_many_arguments)]
fn walk_scan(
    bytes: &[u8],
    start: usize,
    header: &[u8],
    comps: &[Component],
    (width, height): (usize, usize),
    interval: usize,
    dc: &[Option<Huffman>; 4],
    ac: &[Option<Huffman>; 4],
) -> Result<usize, ScanError> {
    let n = usize::from(*header.first().ok_or("a short scan header")?);
    if comps.is_empty() || header.len() < 1 + 2 * n + 3 || n == 0 {
        return Err("a scan before its frame header, or a short scan header".into());
    }
    let (h_max, v_max) = (comps.iter().map(|c| c.h).max().unwrap_or(1), comps.iter().map(|c| c.v).max().unwrap_or(1));
    // Per scan component: its frame component, DC and AC tables.
    let mut parts = Vec::with_capacity(n);
    for k in 0..n {
        let (id, tables) = (header[1 + 2 * k], header[2 + 2 * k]);
        let c = comps.iter().find(|c| c.id == id).ok_or("a scan names a component the frame has not")?;
        let d = dc[usize::from(tables >> 4) & 3].as_ref().ok_or("a scan uses a DC table never defined")?;
        let a = ac[usize::from(tables & 15) & 3].as_ref().ok_or("a scan uses an AC table never defined")?;
        parts.push((c, d, a));
    }
    // Interleaved: MCUs over the whole frame, each with h x v blocks of every component. One component alone: its
    // own blocks, one per MCU.
    let (mcus, per_mcu): (usize, Vec<usize>) = if n == 1 {
        let c = parts[0].0;
        let (cw, ch) = ((width * c.h).div_ceil(h_max), (height * c.v).div_ceil(v_max));
        (cw.div_ceil(8) * ch.div_ceil(8), vec![1])
    } else {
        (width.div_ceil(8 * h_max) * height.div_ceil(8 * v_max), parts.iter().map(|p| p.0.h * p.0.v).collect())
    };
    let mut bits = Bits { data: bytes, pos: start, buf: 0, count: 0, fake: 0 };
    for m in 0..mcus {
        if interval > 0 && m > 0 && m % interval == 0 {
            bits.restart(((m / interval - 1) % 8) as u8)?;
        }
        for (k, (_, d, a)) in parts.iter().enumerate() {
            for _ in 0..per_mcu[k] {
                let s = bits.decode(d)?;
                if s > 11 {
                    return Err("a DC difference of an impossible size (the data is corrupt)".into());
                }
                bits.take(u32::from(s))?;
                let mut c = 1;
                while c < 64 {
                    let rs = bits.decode(a)?;
                    let (run, size) = (usize::from(rs >> 4), u32::from(rs & 15));
                    if size == 0 {
                        if run == 15 {
                            c += 16;
                            continue;
                        }
                        break;
                    }
                    c += run;
                    if c > 63 {
                        return Err("a block with more than 64 coefficients (the data is corrupt)".into());
                    }
                    bits.take(size)?;
                    c += 1;
                }
                if c > 64 {
                    return Err("a block with more than 64 coefficients (the data is corrupt)".into());
                }
            }
        }
    }
    bits.end_of_segment()?;
    Ok(bits.pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Vec<u8> {
        std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/opencv-chessboard/left01.jpg")).unwrap()
    }

    #[test]
    fn a_whole_jpeg_walks_to_its_end() {
        assert_eq!(check(&fixture()), Ok(()));
    }

    #[test]
    fn a_repeated_run_of_data_is_extraneous_bytes() {
        let mut b = fixture();
        let at = b.len() / 2;
        let run: Vec<u8> = b[at..at + 40].to_vec();
        b.splice(at..at, run);
        assert!(check(&b).is_err());
    }

    #[test]
    fn lost_data_is_found() {
        let mut b = fixture();
        let at = b.len() / 2;
        b.drain(at..at + 40);
        assert!(check(&b).is_err());
    }
}
