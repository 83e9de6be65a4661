"""The support desk's orders service, and the payment provider's side of refunds.

`Order.version` is what agents decide from: every change is a compare-and-swap on it (see
`desk.services.TableOrders`). `Refund` stands in for an external payment provider's own records:
its primary key is the idempotency key we send, which is how such providers deduplicate.
"""

from __future__ import annotations

from django.db import models


class Order(models.Model):
    order_id = models.CharField(max_length=40, primary_key=True)
    status = models.CharField(max_length=20)
    amount_cents = models.BigIntegerField()
    version = models.PositiveIntegerField()
    updated_by = models.CharField(max_length=100, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"order {self.order_id} ({self.status}, v{self.version})"


class Refund(models.Model):
    key = models.CharField(max_length=64, primary_key=True)
    order_id = models.CharField(max_length=40, db_index=True)
    amount_cents = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"refund {self.key} of {self.amount_cents} on {self.order_id}"
