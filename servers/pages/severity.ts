/** How the scan report and the dashboard group findings: most severe first, under these headings. */
export const severityOrder = ['critical', 'warning', 'info'] as const;
export const severityTitle = { critical: 'Critical', warning: 'Warnings', info: 'Notes' } as const;
