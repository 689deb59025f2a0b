//! File names in diagnostics, quoted the way GNU coreutils quotes them (`quotef`:
//! gnulib's "shell-escape" style, with `:` also forcing quotes).
//!
//! Rules (observed from GNU md5sum 9.1 and 9.7, and gnulib's documentation):
//! - a name made only of "safe" characters is printed as is;
//! - otherwise it is wrapped in single quotes; a `'` becomes `'\''`; characters that
//!   cannot be printed become `$'\n'`-style escapes (octal `\ooo` per byte when there
//!   is no letter escape), spliced between quoted runs;
//! - a name whose only problem is a `'` (and otherwise only "compatible" characters)
//!   is printed in double quotes instead: `"it's"`.
//!
//! Whether bytes >= 0x80 are printable depends on the locale: in a UTF-8 locale a valid,
//! printable character is kept; in the C locale every such byte is escaped.
//!
//! md5x quotes as md5sum 9.7 does. Up to 9.4, gnulib quoted a name holding a `'` and
//! ending in an escaped character a second time, from a state its first pass left
//! behind: `'''it'\''s'$'\r'` for "it's\r", and `'\001'...` for a name that starts with
//! byte 1, which a shell reads as a backslash and three digits. 9.7 quotes such names
//! as any other: `'it'\''s'$'\r'`, `''$'\001'...`.

/// One unit of a name: an ASCII byte, a printable multibyte character, or a run of
/// bytes that must be escaped one by one.
enum Unit<'a> {
    Ascii(u8),
    Wide(&'a [u8]),
    Raw(&'a [u8]),
}

fn units(name: &[u8], utf8: bool) -> Vec<Unit<'_>> {
    let mut out = Vec::with_capacity(name.len());
    let mut i = 0;
    while i < name.len() {
        let b = name[i];
        if b < 0x80 {
            out.push(Unit::Ascii(b));
            i += 1;
            continue;
        }
        if !utf8 {
            out.push(Unit::Raw(&name[i..i + 1]));
            i += 1;
            continue;
        }
        let want = match b {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => 0,
        };
        if want == 0 {
            out.push(Unit::Raw(&name[i..i + 1]));
            i += 1;
            continue;
        }
        let end = (i + want).min(name.len());
        match std::str::from_utf8(&name[i..end]) {
            Ok(s) if end - i == want => {
                let c = s.chars().next().unwrap_or('\u{fffd}');
                if printable(c) {
                    out.push(Unit::Wide(&name[i..end]));
                } else {
                    out.push(Unit::Raw(&name[i..end]));
                }
                i = end;
            }
            _ => {
                // An incomplete sequence at the end swallows the rest of the name; an
                // invalid one is one bad byte.
                let valid_prefix = name[i + 1..end]
                    .iter()
                    .take_while(|&&c| (0x80..0xc0).contains(&c))
                    .count();
                if end == name.len() && valid_prefix == end - i - 1 && end - i < want {
                    out.push(Unit::Raw(&name[i..end]));
                    i = end;
                } else {
                    out.push(Unit::Raw(&name[i..i + 1]));
                    i += 1;
                }
            }
        }
    }
    out
}

/// Whether glibc's `iswprint` holds for `c` in a UTF-8 locale: every character but the
/// controls, the noncharacters and the line and paragraph separators (U+2028, U+2029;
/// they would break the message's line). glibc also refuses code points its Unicode
/// tables leave unassigned; md5x has no such table and prints them.
fn printable(c: char) -> bool {
    let u = c as u32;
    !(c.is_control()
        || (u & 0xfffe) == 0xfffe
        || (0xfdd0..=0xfdef).contains(&u)
        || u == 0x2028
        || u == 0x2029)
}

/// ASCII bytes that never need quoting (and are "compatible" with double quotes).
fn safe_ascii(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"%+,-./:]_@".contains(&b)
}

fn letter_escape(b: u8) -> Option<u8> {
    Some(match b {
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        0x07 => b'a',
        0x08 => b'b',
        0x0c => b'f',
        0x0b => b'v',
        _ => return None,
    })
}

/// Quote an option's value for a diagnostic, always in quotes (as GNU's `quote` does
/// in the C locale): `'5XB'`; what [`quotef`] would escape is escaped the same way.
pub fn quote_arg(value: &[u8], utf8: bool) -> Vec<u8> {
    let q = quotef(value, utf8);
    if matches!(q.first(), Some(b'\'' | b'"')) {
        return q;
    }
    let mut out = Vec::with_capacity(q.len() + 2);
    out.push(b'\'');
    out.extend_from_slice(&q);
    out.push(b'\'');
    out
}

/// Quote `name` for a diagnostic. `utf8`: whether the locale's character set is UTF-8.
pub fn quotef(name: &[u8], utf8: bool) -> Vec<u8> {
    let us = units(name, utf8);
    let len1 = name.len() == 1;
    let needs = name.is_empty()
        || us.iter().enumerate().any(|(i, u)| match *u {
            Unit::Ascii(b) => {
                if b == b':' {
                    return true;
                }
                if safe_ascii(b) {
                    return false;
                }
                match b {
                    b'#' | b'~' => i == 0,
                    b'{' | b'}' => len1,
                    _ => true,
                }
            }
            Unit::Wide(_) => false,
            Unit::Raw(_) => true,
        });
    if !needs {
        return name.to_vec();
    }

    let (out, saw_quote, all_compat) = shell_quote(&us, len1);
    if saw_quote && all_compat {
        let mut dq = Vec::with_capacity(name.len() + 2);
        dq.push(b'"');
        dq.extend_from_slice(name);
        dq.push(b'"');
        return dq;
    }
    out
}

/// gnulib's shell-escape quoting of `us`. Returns the quoted bytes, whether a `'` was
/// seen, and whether every character also suits double quotes.
fn shell_quote(us: &[Unit<'_>], len1: bool) -> (Vec<u8>, bool, bool) {
    let mut out = Vec::with_capacity(us.len() + 8);
    out.push(b'\'');
    // Inside a `$'...'` run.
    let mut pending = false;
    let mut saw_quote = false;
    let mut all_compat = true;
    let start_esc = |out: &mut Vec<u8>, pending: &mut bool| {
        if !*pending {
            out.extend_from_slice(b"'$'");
            *pending = true;
        }
        out.push(b'\\');
    };
    let end_esc = |out: &mut Vec<u8>, pending: &mut bool| {
        if *pending {
            out.extend_from_slice(b"''");
            *pending = false;
        }
    };
    for (i, u) in us.iter().enumerate() {
        match *u {
            Unit::Ascii(b'\'') => {
                saw_quote = true;
                out.extend_from_slice(b"'\\''");
                pending = false;
            }
            Unit::Ascii(b) if b < 0x20 || b == 0x7f => {
                all_compat = false;
                start_esc(&mut out, &mut pending);
                match letter_escape(b) {
                    Some(l) => out.push(l),
                    None => octal(&mut out, b),
                }
            }
            Unit::Ascii(b) => {
                let compat = safe_ascii(b)
                    || b == b' '
                    || (matches!(b, b'#' | b'~') && i == 0)
                    || (matches!(b, b'{' | b'}') && len1);
                all_compat &= compat;
                end_esc(&mut out, &mut pending);
                out.push(b);
            }
            Unit::Wide(bytes) => {
                end_esc(&mut out, &mut pending);
                out.extend_from_slice(bytes);
            }
            Unit::Raw(bytes) => {
                all_compat = false;
                for (k, &b) in bytes.iter().enumerate() {
                    if k == 0 {
                        start_esc(&mut out, &mut pending);
                    } else {
                        out.push(b'\\');
                    }
                    octal(&mut out, b);
                }
            }
        }
    }
    out.push(b'\'');
    (out, saw_quote, all_compat)
}

fn octal(out: &mut Vec<u8>, b: u8) {
    out.push(b'0' + (b >> 6));
    out.push(b'0' + ((b >> 3) & 7));
    out.push(b'0' + (b & 7));
}

#[cfg(test)]
mod tests {
    use super::quotef;

    fn q(s: &[u8], utf8: bool) -> String {
        String::from_utf8(quotef(s, utf8)).unwrap()
    }

    #[test]
    fn observed_from_gnu() {
        assert_eq!(q(b"plain.txt", false), "plain.txt");
        assert_eq!(q(b"it's", false), "\"it's\"");
        assert_eq!(q(b"it's:x", false), "\"it's:x\"");
        assert_eq!(q(b"a:b", false), "'a:b'");
        assert_eq!(q(b"sp ace", false), "'sp ace'");
        assert_eq!(q(b"t\tab", false), "'t'$'\\t''ab'");
        assert_eq!(q(b"@x", false), "@x");
        assert_eq!(q(b"#h", false), "'#h'");
        assert_eq!(q(b"x#", false), "x#");
        assert_eq!(q(b"{", false), "'{'");
        assert_eq!(q(b"{x", false), "{x");
        assert_eq!(q(b"\xffx", true), "''$'\\377''x'");
        assert_eq!(q(b"\xe2\x82x", true), "''$'\\342\\202''x'");
        assert_eq!(q("zé".as_bytes(), false), "'z'$'\\303\\251'");
        assert_eq!(q("zé".as_bytes(), true), "zé");
        assert_eq!(q(b"q'\nx", false), "'q'\\'''$'\\n''x'");
        assert_eq!(q(b"", false), "''");
        assert_eq!(q(b"\xc2\x80", true), "''$'\\302\\200'");
        assert_eq!(q("nf\u{2028}x".as_bytes(), true), r"'nf'$'\342\200\250''x'");
        assert_eq!(q("\u{2029}".as_bytes(), true), r"''$'\342\200\251'");
        // A `'`, then an escape at the very end: quoted as any other name (md5sum 9.7;
        // 9.1 and 9.4 printed `'''it'\''s'$'\r'`, `'\001'\'''$'\001'`, ...).
        assert_eq!(q(b"it's\r", false), r"'it'\''s'$'\r'");
        assert_eq!(q(b"\x01'\x01", false), r"''$'\001'\'''$'\001'");
        assert_eq!(q("é'\r".as_bytes(), true), r"'é'\'''$'\r'");
        assert_eq!(q("é'\r".as_bytes(), false), r"''$'\303\251'\'''$'\r'");
        assert_eq!(q(b"'\r", false), r"''\'''$'\r'");
        assert_eq!(q(b"\r'a\r", false), r"''$'\r'\''a'$'\r'");
        assert_eq!(q(b"a'\rb'", false), r"'a'\'''$'\r''b'\'''");
    }
}
