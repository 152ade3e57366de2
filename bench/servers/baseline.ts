/** The bare baseline: an Express 5 handler returning constant JSON, nothing else. */
import express from 'express';

const app = express();
app.get('/', (_req, res) => {
  res.json({ ok: true, service: 'baseline' });
});
app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
