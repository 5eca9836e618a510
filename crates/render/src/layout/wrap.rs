//! Prose wrapped at a width, never splitting an API's own names.

use super::width_of;

/// Wraps every line of `text` at `width`; a continuation line is indented two spaces deeper
/// than the line it continues. A markdown hard break (two trailing spaces) stays at the end.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let lead = line.len() - line.trim_start_matches(' ').len();
        let hang = " ".repeat(lead + 2);
        out.push_str(&wrap_line(line, width, &hang));
    }
    out
}

/// Wraps one line at `width`, continuation lines starting with `hang`. Words longer than a
/// line are cut.
pub fn wrap_line(line: &str, width: usize, hang: &str) -> String {
    let hard_break = line.ends_with("  ") && !line.trim().is_empty();
    let body = if hard_break { line.trim_end() } else { line };
    if width_of(body) <= width {
        return line.to_string();
    }
    let lead_len = body.len() - body.trim_start_matches(' ').len();
    let lead = &body[..lead_len];
    let mut lines: Vec<String> = Vec::new();
    let mut cur = lead.to_string();
    let mut cur_has_word = false;
    for word in words_of(&body[lead_len..]) {
        let word = word.as_str();
        let room = width.saturating_sub(width_of(&cur) + usize::from(cur_has_word));
        if width_of(word) <= room {
            if cur_has_word {
                cur.push(' ');
            }
            cur.push_str(word);
            cur_has_word = true;
            continue;
        }
        if cur_has_word {
            lines.push(std::mem::take(&mut cur));
            cur = hang.to_string();
        }
        // Cut a word that does not fit on a line of its own.
        let mut rest: Vec<char> = word.chars().collect();
        let avail = width.saturating_sub(width_of(&cur)).max(1);
        while rest.len() > avail {
            let head: String = rest.drain(..avail).collect();
            cur.push_str(&head);
            lines.push(std::mem::take(&mut cur));
            cur = hang.to_string();
        }
        cur.push_str(&rest.into_iter().collect::<String>());
        cur_has_word = true;
    }
    if cur_has_word || lines.is_empty() {
        lines.push(cur);
    }
    let mut s = lines.join("\n");
    if hard_break {
        s.push_str("  ");
    }
    s
}

/// The words of a line, a short bracketed group kept as one ("[32x32x1 x 4]": a launch is
/// never split across lines); a bracket not closed within four words groups nothing.
fn words_of(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
    let mut out = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let open = w.starts_with('[') && !w.contains(']');
        let close = open
            .then(|| (i + 1..words.len().min(i + 4)).find(|&j| words[j].contains(']')))
            .flatten();
        match close {
            Some(j) => {
                out.push(words[i..=j].join(" "));
                i = j + 1;
            }
            None => {
                out.push(w.to_string());
                i += 1;
            }
        }
    }
    out
}

/// An API's own name for something, known by its shape: a C macro (`CL_DEVICE_MAX_WORK_GROUP_SIZE`,
/// `CU_FUNC_ATTRIBUTE_NUM_REGS`, `VK_KHR_...`), a C extension name (`cl_khr_subgroups`), or a
/// camel-case identifier (`maxComputeWorkGroupInvocations`, `vkCmdDispatch`), maybe in brackets.
pub(super) fn is_native_name(word: &str) -> bool {
    let w = word.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_');
    // `/` joins a macro's variants: CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X/Y/Z.
    let identifier = w.starts_with(|c: char| c.is_ascii_alphabetic())
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '/');
    let underscores = w.matches('_').count();
    let has_upper = w.chars().any(|c| c.is_ascii_uppercase());
    let has_lower = w.chars().any(|c| c.is_ascii_lowercase());
    let c_macro = underscores >= 1 && !has_lower;
    let c_extension = underscores >= 2 && !has_upper;
    let camel = w.len() >= 8 && w.starts_with(|c: char| c.is_ascii_lowercase()) && has_upper;
    identifier && w.len() >= 6 && (c_macro || c_extension || (camel && !w.contains(['_', '/'])))
}
