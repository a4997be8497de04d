//! The sweep's one progress display on stderr: an overall bar and one line
//! per running slot (its phase and elapsed time) on a terminal; plain,
//! timestamped lines when stderr is a file or a CI log.

use std::io::IsTerminal as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Display {
    total: u64,
    started: Instant,
    bars: Option<Bars>,
    /// Plain-line state: slots finished so far.
    done: Mutex<u64>,
}

struct Bars {
    multi: MultiProgress,
    overall: ProgressBar,
}

/// One running slot's line.
#[derive(Clone)]
pub struct SlotLine {
    bar: Option<ProgressBar>,
    name: String,
}

impl Display {
    pub fn new(total: u64, quiet: bool) -> Display {
        let bars = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            let overall = multi.add(ProgressBar::new(total));
            overall.set_style(
                ProgressStyle::with_template("sweep [{bar:30}] {pos}/{len} {msg} ({elapsed})")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            overall.enable_steady_tick(Duration::from_millis(500));
            Bars { multi, overall }
        });
        Display {
            total,
            started: Instant::now(),
            bars,
            done: Mutex::new(0),
        }
    }

    /// A slot that needs no run (skipped, or refused before starting).
    pub fn settled(&self, name: &str, what: &str) {
        self.finish_one(name, what);
    }

    pub fn start(&self, name: &str, attempt: u32) -> SlotLine {
        let bar = self.bars.as_ref().map(|b| {
            let bar = b
                .multi
                .insert_before(&b.overall, ProgressBar::new_spinner());
            bar.set_style(
                ProgressStyle::with_template("  {spinner} {prefix} {msg} ({elapsed})")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_prefix(name.to_owned());
            bar.set_message("starting");
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        if bar.is_none() {
            self.line(&format!("start  {name} (attempt {attempt})"));
        }
        SlotLine {
            bar,
            name: name.to_owned(),
        }
    }

    pub fn phase(&self, line: &SlotLine, phase: &str) {
        match &line.bar {
            Some(bar) => bar.set_message(phase.to_owned()),
            None => self.line(&format!("phase  {}: {phase}", line.name)),
        }
    }

    pub fn finish(&self, line: SlotLine, what: &str) {
        if let Some(bar) = line.bar {
            bar.finish_and_clear();
            if let Some(b) = &self.bars {
                b.multi.remove(&bar);
            }
        }
        self.finish_one(&line.name, what);
    }

    fn finish_one(&self, name: &str, what: &str) {
        let mut done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        *done += 1;
        match &self.bars {
            Some(b) => {
                b.overall.inc(1);
                let _ = b.multi.println(format!("  {name}: {what}"));
            }
            None => self.line(&format!("[{}/{}] {name}: {what}", *done, self.total)),
        }
    }

    pub fn message(&self, text: &str) {
        match &self.bars {
            Some(b) => {
                let _ = b.multi.println(text);
            }
            None => self.line(text),
        }
    }

    pub fn running(&self, running: usize) {
        if let Some(b) = &self.bars {
            b.overall.set_message(format!("{running} running"));
        }
    }

    pub fn close(&self) {
        if let Some(b) = &self.bars {
            b.overall.finish_and_clear();
        }
    }

    fn line(&self, text: &str) {
        let secs = self.started.elapsed().as_secs();
        eprintln!("sweep {:>4}:{:02} {text}", secs / 60, secs % 60);
    }
}
