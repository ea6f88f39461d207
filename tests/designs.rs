//! AWS's published single-table designs, modelled as a user would from the README, and read
//! back as the reference says each access pattern returns. The online shop is that of the
//! `aws-samples/amazon-dynamodb-design-patterns` repository: an order's partition holds the
//! order (`o#…`), its lines (`p#…`), its shipments (`sh#…`) and its invoice (`i#…`), and
//! GSI1 groups a shipment with the lines it carries.

mod common;

use serde::{Deserialize, Serialize};
use singletable::{Collection, Entity, Table};

#[derive(Table)]
#[dynamo(
    name = "shop",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
struct Shop;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "o#{order_id}", sk = "o#{order_id}")]
struct Order {
    order_id: String,
    customer_id: String,
    state: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "o#{order_id}", sk = "p#{product_id}",
         gsi1pk = "sh#{shipment_id}", gsi1sk = "p#{product_id}")]
struct OrderLine {
    order_id: String,
    product_id: String,
    shipment_id: String,
    quantity: u32,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "o#{order_id}", sk = "sh#{shipment_id}",
         gsi1pk = "sh#{shipment_id}", gsi1sk = "sh#{shipment_id}")]
struct Shipment {
    order_id: String,
    shipment_id: String,
    address: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "o#{order_id}", sk = "i#{invoice_id}")]
struct Invoice {
    order_id: String,
    invoice_id: String,
    amount: u64,
}

/// "All details of an order": every item of the order's partition.
#[derive(Collection, Debug, PartialEq)]
enum OrderDetails {
    Order(Order),
    Line(OrderLine),
    Shipment(Shipment),
    Invoice(Invoice),
}

/// "Shipment detail" on GSI1: the shipment and the lines it carries.
#[derive(Collection, Debug, PartialEq)]
enum ShipmentDetail {
    Shipment(Shipment),
    Line(OrderLine),
}

fn order(order_id: &str) -> Vec<OrderDetails> {
    let line = |product_id: &str, quantity| OrderLine {
        order_id: order_id.into(),
        product_id: product_id.into(),
        shipment_id: format!("{order_id}-s1"),
        quantity,
    };
    vec![
        OrderDetails::Order(Order {
            order_id: order_id.into(),
            customer_id: "c#12345".into(),
            state: "PLACED".into(),
        }),
        OrderDetails::Line(line("99", 2)),
        OrderDetails::Line(line("42", 1)),
        OrderDetails::Shipment(Shipment {
            order_id: order_id.into(),
            shipment_id: format!("{order_id}-s1"),
            address: "1 Main St".into(),
        }),
        OrderDetails::Invoice(Invoice {
            order_id: order_id.into(),
            invoice_id: format!("{order_id}-i1"),
            amount: 4200,
        }),
    ]
}

async fn put_all(db: &singletable::Db<Shop>, details: &[OrderDetails]) {
    for detail in details {
        match detail {
            OrderDetails::Order(item) => db.put(item).send().await.unwrap(),
            OrderDetails::Line(item) => db.put(item).send().await.unwrap(),
            OrderDetails::Shipment(item) => db.put(item).send().await.unwrap(),
            OrderDetails::Invoice(item) => db.put(item).send().await.unwrap(),
        }
    }
}

/// In DynamoDB's sort key order: `i#` < `o#` < `p#` < `sh#`, and lines by product.
fn in_key_order(details: &[OrderDetails]) -> Vec<&OrderDetails> {
    let mut sorted: Vec<&OrderDetails> = details.iter().collect();
    sorted.sort_by_key(|detail| match detail {
        OrderDetails::Order(order) => format!("o#{}", order.order_id),
        OrderDetails::Line(line) => format!("p#{}", line.product_id),
        OrderDetails::Shipment(shipment) => format!("sh#{}", shipment.shipment_id),
        OrderDetails::Invoice(invoice) => format!("i#{}", invoice.invoice_id),
    });
    sorted
}

#[tokio::test]
async fn all_details_of_an_order_are_its_whole_partition() {
    let db = singletable::testing::table::<Shop>().await.unwrap();
    let wanted = order("12345");
    put_all(&db, &wanted).await;
    put_all(&db, &order("12346")).await;

    let request = db
        .query(Order::partition("12345"))
        .collection::<OrderDetails>()
        .params()
        .unwrap();
    assert_eq!(
        request.body["KeyConditionExpression"], "#n0 = :v0",
        "the entities share no sort key prefix, so the partition alone is the condition"
    );
    let details = db
        .query(Order::partition("12345"))
        .collection::<OrderDetails>()
        .all()
        .await
        .unwrap();
    assert_eq!(
        details.iter().collect::<Vec<_>>(),
        in_key_order(&wanted),
        "the order, its lines, its shipment and its invoice, in sort key order"
    );
    // Starting from another entity of the partition reads the same items.
    let from_an_invoice = db
        .query(Invoice::partition("12345"))
        .collection::<OrderDetails>()
        .all()
        .await
        .unwrap();
    assert_eq!(from_an_invoice, details);
    // One entity's query still reads that entity alone.
    let lines = db.query(OrderLine::partition("12345")).all().await.unwrap();
    assert_eq!(lines.len(), 2);
}

#[tokio::test]
async fn a_shipments_detail_on_the_index_is_the_shipment_with_its_lines() {
    let db = singletable::testing::table::<Shop>().await.unwrap();
    let wanted = order("777");
    put_all(&db, &wanted).await;
    let detail = db
        .query(Shipment::gsi1("777-s1"))
        .collection::<ShipmentDetail>()
        .all()
        .await
        .unwrap();
    let lines = detail
        .iter()
        .filter(|item| matches!(item, ShipmentDetail::Line(_)))
        .count();
    let shipments = detail
        .iter()
        .filter(|item| matches!(item, ShipmentDetail::Shipment(_)))
        .count();
    assert_eq!((shipments, lines), (1, 2), "{detail:?}");
    // Lines sort before the shipment on GSI1 (`p#` < `sh#`).
    assert!(matches!(detail.last(), Some(ShipmentDetail::Shipment(_))));
}

/// Entities that do share constant text keep it in the condition: fewer items read.
#[test]
fn a_collection_whose_sort_keys_share_a_prefix_reads_that_prefix() {
    #[derive(Table)]
    #[dynamo(name = "docs", pk = "PK", sk = "SK")]
    struct Docs;

    #[derive(Entity, Serialize, Deserialize, Debug, PartialEq)]
    #[dynamo(table = Docs, pk = "WS#{workspace}", sk = "DOC#{doc}")]
    struct Document {
        workspace: String,
        doc: String,
    }

    #[derive(Entity, Serialize, Deserialize, Debug, PartialEq)]
    #[dynamo(table = Docs, pk = "WS#{workspace}", sk = "DOC#{doc}#CMT#{comment}")]
    struct Comment {
        workspace: String,
        doc: String,
        comment: String,
    }

    #[derive(Collection, Debug, PartialEq)]
    enum Thread {
        Document(Document),
        Comment(Comment),
    }

    let db = common::offline::<Docs>();
    let request = db
        .query(Comment::partition("w1"))
        .collection::<Thread>()
        .params()
        .unwrap();
    assert_eq!(
        request.body["KeyConditionExpression"],
        "#n0 = :v0 AND begins_with(#n1, :v1)"
    );
    assert_eq!(
        request.body["ExpressionAttributeValues"][":v1"]["S"],
        "DOC#"
    );
    // A part given first narrows the collection by the starting entity's template.
    let one_document = db
        .query(Comment::partition("w1"))
        .sort(Comment::DOC, "d1".to_owned())
        .collection::<Thread>()
        .params()
        .unwrap();
    assert_eq!(
        one_document.body["ExpressionAttributeValues"][":v1"]["S"],
        "DOC#d1#CMT#"
    );
}
