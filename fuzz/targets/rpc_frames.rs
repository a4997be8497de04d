//! The JSON-RPC frame path from a server, as the recorder runs it: stdio
//! bytes cut into bounded lines however the stream is chunked, each line
//! classified as a frame or garbage, each frame read by rmcp as the client
//! reads it; and event-stream bytes cut into bounded SSE events. Nothing may
//! panic, no line or event passes its limit, and where the stream is cut
//! never changes what comes out.
//!
//! One home for the target's check: `fuzz_targets/rpc_frames.rs` hands it
//! libFuzzer's inputs, and the e2e test `fuzz_corpus` replays the committed
//! corpus through it on the stable toolchain in every test run.

use fitness_recorder::mcp::frames::{
    BoundedLines, Frame, Piece, SseItem, SseParser, classify, line_text,
};

#[derive(Debug, PartialEq)]
enum Out {
    Line(Vec<u8>),
    TooLong,
}

fn lines(max: usize, chunks: &[&[u8]]) -> Vec<Out> {
    let mut splitter = BoundedLines::new(max);
    let mut out = Vec::new();
    let mut take = |p: Piece<'_>| {
        out.push(match p {
            Piece::Line(l) => {
                assert!(l.len() <= max, "a line past the limit");
                Out::Line(l.to_vec())
            }
            Piece::TooLong => Out::TooLong,
        })
    };
    for chunk in chunks {
        splitter.push(chunk, &mut take);
        assert!(splitter.pending() <= max);
    }
    splitter.finish(&mut take);
    out
}

fn events(max: usize, chunks: &[&[u8]]) -> Vec<SseItem> {
    let mut parser = SseParser::new(max);
    let mut out = Vec::new();
    for chunk in chunks {
        parser.push(chunk, |e| {
            if let SseItem::Event(data) = &e {
                assert!(data.len() <= max, "an event past the limit");
            }
            out.push(e);
        });
    }
    out
}

pub fn check(data: &[u8]) {
    let Some((&control, stream)) = data.split_first() else {
        return;
    };
    // Small limits, so the oversized paths run too; chunks of 1 to 16 bytes.
    let max = 1 + usize::from(control & 0x0f) * 16;
    let step = 1 + usize::from(control >> 4);
    let chunked: Vec<&[u8]> = stream.chunks(step).collect();

    let whole = lines(max, &[stream]);
    assert_eq!(lines(max, &chunked), whole, "the cut changed the lines");
    for out in &whole {
        let Out::Line(line) = out else { continue };
        let text = line_text(line);
        if let Frame::Json(raw) = classify(&text) {
            // What rmcp's client does with every frame we pass it.
            let _ = serde_json::from_str::<rmcp::model::ServerJsonRpcMessage>(raw.get());
        }
    }
    // A generous limit as the transport uses: every line is whole.
    let big = lines(fitness_recorder::mcp::frames::MAX_LINE, &chunked);
    assert!(big.iter().all(|o| matches!(o, Out::Line(_))));

    let whole = events(max, &[stream]);
    assert_eq!(events(max, &chunked), whole, "the cut changed the events");
    for event in &whole {
        if let SseItem::Event(frame) = event {
            let _ = serde_json::from_str::<rmcp::model::ServerJsonRpcMessage>(frame);
        }
    }
}
