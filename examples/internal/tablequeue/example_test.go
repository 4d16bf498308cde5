package tablequeue_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/examples/internal/tablequeue"
)

func Example() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Queues")
	clk := tablequeue.NewManualClock(time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC))
	q, _ := tablequeue.New(tbl, "thumbnails", &tablequeue.Options{
		VisibilityTimeout: 30 * time.Second,
		MaxDequeueCount:   2,
		Clock:             clk.Now,
	})

	q.Enqueue(ctx, "resize photo 17")

	// Worker A takes the message and stalls: the message is hidden, not gone.
	a, _, _ := q.Dequeue(ctx)
	_, ok, _ := q.Dequeue(ctx)
	fmt.Println("A got:", a.Body, "count", a.DequeueCount, "| visible to others:", ok)

	// After the timeout, worker B gets it, and A can no longer delete it.
	clk.Advance(30 * time.Second)
	b, _, _ := q.Dequeue(ctx)
	fmt.Println("B got:", b.Body, "count", b.DequeueCount)
	err := q.Delete(ctx, a.ID, a.PopReceipt)
	fmt.Println("A deletes:", errors.Is(err, tablequeue.ErrPopReceiptMismatch), localtable.ErrorCodeOf(err))

	// B stalls too; the third dequeue would exceed MaxDequeueCount.
	clk.Advance(30 * time.Second)
	_, ok, _ = q.Dequeue(ctx)
	n, _ := q.Len(ctx)
	p, _ := q.Poison().Peek(ctx, 1)
	fmt.Println("third dequeue returned a message:", ok, "| queue:", n, "| poison:", p[0].Body)
	// Output:
	// A got: resize photo 17 count 1 | visible to others: false
	// B got: resize photo 17 count 2
	// A deletes: true PopReceiptMismatch
	// third dequeue returned a message: false | queue: 0 | poison: resize photo 17
}
