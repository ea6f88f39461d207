use serde::{Deserialize, Serialize};

#[derive(singletable::KeyPart, Serialize, Deserialize, Clone, Copy)]
pub enum Status {
    Open,
    #[serde(rename = "on#hold")]
    OnHold,
}

fn main() {}
