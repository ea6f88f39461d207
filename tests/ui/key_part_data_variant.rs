use singletable::KeyPart;

#[derive(KeyPart)]
pub enum Status {
    Open,
    Snoozed { until: u64 },
}

fn main() {}
