//! Puts and gets one item through a client built without the SDK's default HTTPS client: the
//! endpoint comes from `AWS_ENDPOINT_URL_DYNAMODB`, as in production.

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode};
use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "rustls-client", pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize, Debug, PartialEq)]
#[dynamo(table = App, pk = "NOTE#{id}", sk = "NOTE")]
struct Note {
    id: String,
    text: String,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoint = std::env::var("AWS_ENDPOINT_URL_DYNAMODB")
        .map_err(|_| "set AWS_ENDPOINT_URL_DYNAMODB to a DynamoDB endpoint")?;
    let http_client = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(CryptoMode::Ring))
        .build_https();
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .http_client(http_client)
        .region(Region::new("us-east-1"))
        // A local engine or the fault proxy takes any keys; on AWS, aws-config's chain or the
        // function's role provides them.
        .credentials_provider(Credentials::new("local", "local", None, None, "static"))
        .endpoint_url(endpoint)
        .build();
    let db = Db::<App>::new(aws_sdk_dynamodb::Client::from_conf(config));
    db.admin().ensure_table().await?;
    let note = Note {
        id: "1".into(),
        text: "sent over rustls with ring".into(),
    };
    db.put(&note).send().await?;
    let read = db.get::<Note>(Note::key("1")?).send().await?;
    if read != note {
        return Err(format!("read back {read:?}, wrote {note:?}").into());
    }
    println!("put and read back one note through a rustls-only client");
    Ok(())
}
