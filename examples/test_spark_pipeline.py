"""A PySpark pipeline test as a user writes it: Spark's own Kafka connector (format("kafka")) pointed at a
kafkamock broker, both from kafkamock's pytest plugin (kafka_broker, kafka_spark). Run it with pytest."""

from kafkamock.client.blocking import Producer


def test_the_pipeline_upper_cases_orders(kafka_broker, kafka_spark):
    kafka_broker.create_topic("orders", 1)
    with Producer({"bootstrap.servers": kafka_broker.bootstrap_servers}) as producer:
        for order in (b"tea", b"cake"):
            producer.send("orders", value=order)
    orders = (kafka_spark.read.format("kafka")
              .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
              .option("subscribe", "orders").load())
    upper = orders.selectExpr("upper(CAST(value AS STRING)) AS order")
    assert sorted(row.order for row in upper.collect()) == ["CAKE", "TEA"]
