//! Size expressions: `n`, `width * height`, `ceil_div(n, 256)`, `block * 4`.
//!
//! Integers, names, `+ - * / %`, parentheses and the functions `ceil_div(a, b)`, `min(a, b)`,
//! `max(a, b)`. Evaluated in u64 with checked arithmetic: an overflow, a result below zero or
//! a division by zero is an error that quotes the expression and the values of its names, so a
//! `--size` too large for a buffer says why instead of allocating a wrapped size. A small
//! recursive-descent parser: the grammar is four rules and needs no crate.

use std::fmt;

/// A parsed expression and the text it came from (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expr {
    text: String,
    node: Node,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Num(u64),
    Name(String),
    Bin(Op, Box<Node>, Box<Node>),
    Call(Func, Box<Node>, Box<Node>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    CeilDiv,
    Min,
    Max,
}

impl Expr {
    /// Parses `text`; the error says what was expected where.
    pub fn parse(text: &str) -> Result<Expr, String> {
        let tokens = tokenize(text)?;
        let mut p = Parser { tokens, at: 0 };
        let node = p.sum().map_err(|e| format!("'{}': {e}", text.trim()))?;
        if let Some(t) = p.tokens.get(p.at) {
            return Err(format!("'{text}': unexpected '{t}'"));
        }
        Ok(Expr {
            text: text.trim().to_string(),
            node,
        })
    }

    /// A constant expression (a number given as a TOML integer).
    pub fn constant(n: u64) -> Expr {
        Expr {
            text: n.to_string(),
            node: Node::Num(n),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The names the expression uses, each once, in order of first use.
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        collect_names(&self.node, &mut out);
        out
    }

    /// Evaluates with `lookup` giving each name's value. Errors quote the expression and the
    /// names' values: "'n * n * n' overflows 64 bits at n = 4294967296".
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Option<u64>) -> Result<u64, String> {
        eval(&self.node, lookup).map_err(|e| {
            let at: Vec<String> = self
                .names()
                .iter()
                .map(|n| match lookup(n) {
                    Some(v) => format!("{n} = {v}"),
                    None => format!("{n} unknown"),
                })
                .collect();
            match at.is_empty() {
                true => format!("'{}' {e}", self.text),
                false => format!("'{}' {e} at {}", self.text, at.join(", ")),
            }
        })
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn collect_names<'a>(node: &'a Node, out: &mut Vec<&'a str>) {
    match node {
        Node::Num(_) => {}
        Node::Name(n) => {
            if !out.contains(&n.as_str()) {
                out.push(n);
            }
        }
        Node::Bin(_, a, b) | Node::Call(_, a, b) => {
            collect_names(a, out);
            collect_names(b, out);
        }
    }
}

fn eval(node: &Node, lookup: &dyn Fn(&str) -> Option<u64>) -> Result<u64, String> {
    const OVERFLOW: &str = "overflows 64 bits";
    match node {
        Node::Num(n) => Ok(*n),
        Node::Name(n) => lookup(n).ok_or_else(|| format!("uses '{n}', which has no value")),
        Node::Bin(op, a, b) => {
            let (a, b) = (eval(a, lookup)?, eval(b, lookup)?);
            match op {
                Op::Add => a.checked_add(b).ok_or_else(|| OVERFLOW.to_string()),
                Op::Mul => a.checked_mul(b).ok_or_else(|| OVERFLOW.to_string()),
                Op::Sub => a
                    .checked_sub(b)
                    .ok_or_else(|| "goes below zero".to_string()),
                Op::Div => a
                    .checked_div(b)
                    .ok_or_else(|| "divides by zero".to_string()),
                Op::Rem => a
                    .checked_rem(b)
                    .ok_or_else(|| "divides by zero".to_string()),
            }
        }
        Node::Call(f, a, b) => {
            let (a, b) = (eval(a, lookup)?, eval(b, lookup)?);
            match f {
                Func::Min => Ok(a.min(b)),
                Func::Max => Ok(a.max(b)),
                Func::CeilDiv if b == 0 => Err("divides by zero".to_string()),
                Func::CeilDiv => Ok(a.div_ceil(b)),
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Num(u64),
    Name(String),
    Sym(char),
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Num(n) => write!(f, "{n}"),
            Token::Name(n) => f.write_str(n),
            Token::Sym(c) => write!(f, "{c}"),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '_') {
                i += 1;
            }
            let digits: String = chars[start..i].iter().filter(|c| **c != '_').collect();
            let n = digits
                .parse()
                .map_err(|_| format!("'{text}': {digits} does not fit 64 bits"))?;
            out.push(Token::Num(n));
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Name(chars[start..i].iter().collect()));
        } else if "+-*/%(),".contains(c) {
            out.push(Token::Sym(c));
            i += 1;
        } else {
            return Err(format!("'{text}': '{c}' is not part of an expression (integers, size names, + - * / %, parentheses, ceil_div, min, max)"));
        }
    }
    if out.is_empty() {
        return Err("an expression is empty".to_string());
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek_sym(&self) -> Option<char> {
        match self.tokens.get(self.at) {
            Some(Token::Sym(c)) => Some(*c),
            _ => None,
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        match self.peek_sym() == Some(c) {
            true => {
                self.at += 1;
                Ok(())
            }
            false => Err(self.unexpected(&format!("'{c}'"))),
        }
    }

    fn unexpected(&self, wanted: &str) -> String {
        match self.tokens.get(self.at) {
            Some(t) => format!("expected {wanted}, found '{t}'"),
            None => format!("expected {wanted} at the end"),
        }
    }

    /// sum := product (('+' | '-') product)*
    fn sum(&mut self) -> Result<Node, String> {
        let mut left = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek_sym() {
            self.at += 1;
            let right = self.product()?;
            let op = if op == '+' { Op::Add } else { Op::Sub };
            left = Node::Bin(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    /// product := atom (('*' | '/' | '%') atom)*
    fn product(&mut self) -> Result<Node, String> {
        let mut left = self.atom()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek_sym() {
            self.at += 1;
            let right = self.atom()?;
            let op = match op {
                '*' => Op::Mul,
                '/' => Op::Div,
                _ => Op::Rem,
            };
            left = Node::Bin(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    /// atom := number | name | func '(' sum ',' sum ')' | '(' sum ')'
    fn atom(&mut self) -> Result<Node, String> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        match token {
            Some(Token::Num(n)) => Ok(Node::Num(n)),
            Some(Token::Sym('(')) => {
                let inner = self.sum()?;
                self.expect(')')?;
                Ok(inner)
            }
            Some(Token::Name(name)) => {
                let func = match name.as_str() {
                    "ceil_div" => Func::CeilDiv,
                    "min" => Func::Min,
                    "max" => Func::Max,
                    _ => return Ok(Node::Name(name)),
                };
                self.expect('(')?;
                let a = self.sum()?;
                self.expect(',')?;
                let b = self.sum()?;
                self.expect(')')?;
                Ok(Node::Call(func, Box::new(a), Box::new(b)))
            }
            _ => {
                self.at -= 1;
                Err(self.unexpected("a number, a name or '('"))
            }
        }
    }
}
