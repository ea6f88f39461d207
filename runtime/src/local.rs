//! Local engine (being written).
